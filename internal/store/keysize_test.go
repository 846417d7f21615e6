package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/auth"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// Every API request pays for its rate-limit counts: a counter item is small
// and in no index, so a count is one write unit; the key itself is only read.
func TestCountRequest_OneWriteUnitAndNeverPastTheLimit(t *testing.T) {
	st := testenv.Store(t, nil)
	ctx := context.Background()
	secret := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	k := auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_x", Type: auth.Secret, Environment: ticketing.EnvTest, Scopes: auth.AllScopes, CreatedAt: time.Now()}
	if err := st.Keys.CreateKey(ctx, k, auth.Hash(secret)); err != nil {
		t.Fatal(err)
	}
	var units []float64
	st.OnCapacity(func(op string, c *types.ConsumedCapacity) { units = append(units, *c.CapacityUnits) })
	if _, err := st.Keys.LookupKey(ctx, auth.Hash(secret)); err != nil {
		t.Fatal(err)
	}
	if len(units) != 1 || units[0] != 1 {
		t.Fatalf("LookupKey consumed %v read units, want 1 (a consistent read of an item under 4 KB)", units)
	}
	units = units[:0]
	until := time.Now().Add(time.Minute)
	counter := k.ID + "#read#123#s0"
	for i := 1; i <= 3; i++ {
		used, ok, err := st.Keys.CountRequest(ctx, counter, 3, until)
		if err != nil || !ok || used != i {
			t.Fatalf("count %d: used %d admitted %v err %v", i, used, ok, err)
		}
	}
	if _, ok, err := st.Keys.CountRequest(ctx, counter, 3, until); err != nil || ok {
		t.Fatalf("a fourth request on a limit of 3: admitted %v, err %v", ok, err)
	}
	for _, u := range units {
		if u != 1 {
			t.Fatalf("CountRequest consumed %v write units, want 1 each", units)
		}
	}
}

// An operator's budgets land on the key as the functions read it and as tixctl lists it.
func TestSetKeyRateLimits(t *testing.T) {
	st := testenv.Store(t, nil)
	ctx := context.Background()
	secret := auth.NewSecret(auth.Publishable, ticketing.EnvTest)
	k := auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_x", Type: auth.Publishable, Environment: ticketing.EnvTest, CreatedAt: time.Now().UTC()}
	if err := st.Keys.CreateKey(ctx, k, auth.Hash(secret)); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Keys.LookupKey(ctx, auth.Hash(secret)); err != nil || got.RateLimits != nil {
		t.Fatalf("new key: %+v %v, want no rate limits", got, err)
	}
	rl := &auth.RateLimits{Reads: 600000, Writes: 60000, IPReads: 120, IPWrites: 10}
	if _, err := st.Keys.SetKeyRateLimits(ctx, k.ID, func(auth.Key) (*auth.RateLimits, error) { return rl, nil }); err != nil {
		t.Fatal(err)
	}
	got, err := st.Keys.LookupKey(ctx, auth.Hash(secret))
	if err != nil || got.RateLimits == nil || *got.RateLimits != *rl {
		t.Fatalf("after set-budget: %+v %v", got, err)
	}
	list, err := st.Keys.ListKeys(ctx, "org_x")
	if err != nil || len(list) != 1 || list[0].RateLimits == nil || *list[0].RateLimits != *rl {
		t.Fatalf("listed: %+v %v", list, err)
	}
	var te *ticketing.Error
	if _, err := st.Keys.SetKeyRateLimits(ctx, "key_missing", func(auth.Key) (*auth.RateLimits, error) { return rl, nil }); !errors.As(err, &te) || te.Code != ticketing.CodeNotFound {
		t.Fatalf("unknown key: %v, want not found", err)
	}
}
