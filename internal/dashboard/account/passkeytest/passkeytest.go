// Package passkeytest is the conformance suite of account.Passkeys, run
// against the DynamoDB store and the in-memory one: a credential id is
// registered once, an account removes only its own passkeys, and a
// sign-in's write wins only over the sign count it was checked against,
// however many race.
package passkeytest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/dashboard/account"
)

// Run runs the suite on fresh stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) account.Passkeys) {
	t.Run("AddGetListRemove", func(t *testing.T) { addGetListRemove(t, newStore(t)) })
	t.Run("CredentialIDRegisteredOnce", func(t *testing.T) { registeredOnce(t, newStore(t)) })
	t.Run("UseIsConditionalOnTheCount", func(t *testing.T) { useConditional(t, newStore(t)) })
	t.Run("ConcurrentUsesOneWins", func(t *testing.T) { concurrentUses(t, newStore(t)) })
}

func passkey(id, email string, at time.Time) account.Passkey {
	return account.Passkey{ID: id, Email: email, Name: "Key " + id, UserHandle: []byte("handle-" + email),
		Credential: []byte(`{"id":"` + id + `"}`), SignCount: 0, CreatedAt: at.UTC().Truncate(time.Millisecond)}
}

func addGetListRemove(t *testing.T, st account.Passkeys) {
	ctx := context.Background()
	now := time.Now()
	for i, p := range []account.Passkey{passkey("b", "a@example.com", now.Add(time.Second)), passkey("a", "a@example.com", now),
		passkey("c", "other@example.com", now)} {
		if err := st.AddPasskey(ctx, p); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	got, err := st.GetPasskey(ctx, "b")
	if err != nil || got.Email != "a@example.com" || got.Name != "Key b" || !bytes.Equal(got.Credential, []byte(`{"id":"b"}`)) ||
		!bytes.Equal(got.UserHandle, []byte("handle-a@example.com")) || got.LastUsedAt != nil {
		t.Fatalf("get b: %+v %v", got, err)
	}
	ps, err := st.ListPasskeys(ctx, "a@example.com")
	if err != nil || len(ps) != 2 || ps[0].ID != "a" || ps[1].ID != "b" {
		t.Fatalf("list: %+v %v, want a then b (oldest first)", ps, err)
	}
	if err := st.RemovePasskey(ctx, "other@example.com", "a"); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("another account removes a: %v, want ErrNotFound", err)
	}
	if err := st.RemovePasskey(ctx, "a@example.com", "a"); err != nil {
		t.Fatalf("remove a: %v", err)
	}
	if _, err := st.GetPasskey(ctx, "a"); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("get a after removal: %v", err)
	}
	if err := st.RemovePasskey(ctx, "a@example.com", "a"); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("remove a twice: %v", err)
	}
	if ps, _ := st.ListPasskeys(ctx, "a@example.com"); len(ps) != 1 || ps[0].ID != "b" {
		t.Errorf("list after removal: %+v", ps)
	}
	if ps, err := st.ListPasskeys(ctx, "nobody@example.com"); err != nil || len(ps) != 0 {
		t.Errorf("list of an account without passkeys: %+v %v", ps, err)
	}
}

func registeredOnce(t *testing.T, st account.Passkeys) {
	ctx := context.Background()
	if err := st.AddPasskey(ctx, passkey("dup", "a@example.com", time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := st.AddPasskey(ctx, passkey("dup", "b@example.com", time.Now())); !errors.Is(err, account.ErrExists) {
		t.Errorf("the same credential id for another account: %v, want ErrExists", err)
	}
	if ps, _ := st.ListPasskeys(ctx, "b@example.com"); len(ps) != 0 {
		t.Errorf("the loser's passkeys: %+v", ps)
	}
}

func useConditional(t *testing.T, st account.Passkeys) {
	ctx := context.Background()
	if err := st.AddPasskey(ctx, passkey("k", "a@example.com", time.Now())); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	if err := st.UsePasskey(ctx, "a@example.com", "k", account.PasskeyUse{PrevCount: 0, SignCount: 5, BackupState: true, At: at}); err != nil {
		t.Fatalf("first use: %v", err)
	}
	p, _ := st.GetPasskey(ctx, "k")
	if p.SignCount != 5 || !p.BackupState || p.LastUsedAt == nil || !p.LastUsedAt.Equal(at) {
		t.Errorf("after a use: %+v", p)
	}
	if err := st.UsePasskey(ctx, "a@example.com", "k", account.PasskeyUse{PrevCount: 0, SignCount: 6, At: at}); !errors.Is(err, account.ErrChanged) {
		t.Errorf("a use checked against the old count: %v, want ErrChanged", err)
	}
	if err := st.UsePasskey(ctx, "b@example.com", "k", account.PasskeyUse{PrevCount: 5, SignCount: 6, At: at}); !errors.Is(err, account.ErrChanged) {
		t.Errorf("a use under another account: %v, want ErrChanged", err)
	}
	if err := st.UsePasskey(ctx, "a@example.com", "gone", account.PasskeyUse{PrevCount: 0, SignCount: 1, At: at}); !errors.Is(err, account.ErrChanged) {
		t.Errorf("a use of a removed passkey: %v, want ErrChanged", err)
	}
	if p, _ := st.GetPasskey(ctx, "k"); p.SignCount != 5 {
		t.Errorf("count after refused uses: %d, want 5", p.SignCount)
	}
}

func concurrentUses(t *testing.T, st account.Passkeys) {
	ctx := context.Background()
	if err := st.AddPasskey(ctx, passkey("race", "a@example.com", time.Now())); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := st.UsePasskey(ctx, "a@example.com", "race", account.PasskeyUse{PrevCount: 0, SignCount: uint32(i + 1), At: time.Now()})
			switch {
			case err == nil:
				won.Add(1)
			case !errors.Is(err, account.ErrChanged):
				t.Errorf("use %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Errorf("%d of %d sign-ins checked against count 0 were recorded, want exactly 1", won.Load(), n)
	}
}
