package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// Reports of one leaked key racing (several partners, a retried report, an
// operator by hand): one conditional write revokes it and stores its reason
// and source; every other call changes nothing and says so.
func TestRevokeKeyByHash_FirstReportWinsUnderRace(t *testing.T) {
	st := testenv.Store(t, nil)
	ctx := context.Background()
	secret := auth.NewSecret(auth.Secret, ticketing.EnvLive)
	k := auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_x", Type: auth.Secret, Environment: ticketing.EnvLive,
		Scopes: auth.AllScopes, Last4: secret[len(secret)-4:], CreatedAt: time.Now().UTC()}
	if err := st.Keys.CreateKey(ctx, k, auth.Hash(secret)); err != nil {
		t.Fatal(err)
	}
	const n = 8
	at := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	won := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := "https://github.com/o/r/blob/abc/f" + string(rune('0'+i))
			var got *auth.Key
			got, won[i], errs[i] = st.Keys.RevokeKeyByHash(ctx, auth.Hash(secret), auth.Revocation{At: at.Add(time.Duration(i) * time.Second), Reason: auth.RevokedLeaked, Source: src})
			if errs[i] == nil && (got.RevokedAt == nil || got.RevokeReason != auth.RevokedLeaked) {
				errs[i] = errors.New("returned key is not revoked as leaked")
			}
		}()
	}
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if won[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d calls revoked the key, want exactly 1", winners)
	}
	// Both items agree: the hash item the requests read, the id item tixctl reads.
	byHash, err := st.Keys.LookupKey(ctx, auth.Hash(secret))
	if err != nil {
		t.Fatal(err)
	}
	byID, err := st.Keys.KeyByID(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if byHash.RevokedAt == nil || !byHash.RevokedAt.Equal(*byID.RevokedAt) || byHash.LeakSource != byID.LeakSource ||
		byHash.LeakSource == "" || byID.RevokeReason != auth.RevokedLeaked || byHash.Usable(time.Now()) {
		t.Fatalf("items disagree or not revoked: by hash %+v, by id %+v", byHash, byID)
	}
	// A later revocation, by hand, keeps the first one.
	again, won2, err := st.Keys.RevokeKeyWith(ctx, k.ID, auth.Revocation{At: at.Add(time.Hour)})
	if err != nil || won2 || !again.RevokedAt.Equal(*byID.RevokedAt) || again.LeakSource != byID.LeakSource {
		t.Fatalf("second revocation: won %v err %v key %+v", won2, err, again)
	}
	if _, _, err := st.Keys.RevokeKeyByHash(ctx, auth.Hash("sk_live_nobody"), auth.Revocation{At: at}); !errors.Is(err, auth.ErrUnknownKey) {
		t.Fatalf("unknown hash: %v, want auth.ErrUnknownKey", err)
	}
}
