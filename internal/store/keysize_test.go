package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/auth"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// Every API request pays for Admit: the key item is in no index, so the
// conditional update is one write unit (an indexed item would pay per index too).
func TestAdmit_CostsOneWriteUnit(t *testing.T) {
	st := testenv.Store(t, nil)
	ctx := context.Background()
	secret := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	k := auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_x", Type: auth.Secret, Environment: ticketing.EnvTest, Scopes: auth.AllScopes, CreatedAt: time.Now()}
	if err := st.CreateKey(ctx, k, auth.Hash(secret)); err != nil {
		t.Fatal(err)
	}
	var units []float64
	st.OnCapacity(func(op string, c *types.ConsumedCapacity) { units = append(units, *c.CapacityUnits) })
	now := time.Now()
	for i := 0; i < 3; i++ {
		if _, err := st.Admit(ctx, auth.Hash(secret), "read", 100, time.Minute, now); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("write units per Admit: %v", units)
	units = nil
	if _, err := st.LookupKey(ctx, auth.Hash(secret)); err != nil {
		t.Fatal(err)
	}
	if len(units) != 1 || units[0] != 1 {
		t.Fatalf("LookupKey consumed %v read units, want 1 (a consistent read of an item under 4 KB)", units)
	}
	units = units[:0]
	for i := 0; i < 3; i++ {
		if _, err := st.Admit(ctx, auth.Hash(secret), "read", 100, time.Minute, now); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range units {
		if u != 1 {
			t.Fatalf("Admit consumed %v write units, want 1", units)
		}
	}
}
