package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// Concurrent sign-ups with one address create one account and one
// organizer: the transaction's conditions decide, and the losers write
// nothing (no organizer without its owner).
func TestAccounts_ConcurrentSignUpsOneAccount(t *testing.T) {
	st := testenv.Store(t, nil)
	a := st.Accounts()
	ctx := context.Background()
	now := time.Now().UTC()
	const n = 8
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			org := ticketing.Organizer{ID: fmt.Sprintf("org_race%d", i), Name: "Race", CreatedAt: now}
			err := a.SignUp(ctx, org, account.User{Email: "race@example.com", PasswordHash: "h", CreatedAt: now},
				account.Member{OrganizerID: org.ID, Email: "race@example.com", Role: account.Owner, AddedAt: now},
				account.Settings{OrganizerID: org.ID, TimeZone: "UTC"})
			switch {
			case err == nil:
				won.Add(1)
			case !errors.Is(err, account.ErrExists):
				t.Errorf("sign-up %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	ms, err := a.Memberships(ctx, "race@example.com")
	if won.Load() != 1 || err != nil || len(ms) != 1 {
		t.Fatalf("%d sign-ups won, memberships %v (%v): want exactly one", won.Load(), ms, err)
	}
	orgs, _ := st.Organizers.ListOrganizers(ctx)
	if len(orgs) != 1 || orgs[0].ID != ms[0].OrganizerID {
		t.Errorf("organizers %v: want only the winner's", orgs)
	}
}

// A link is taken once, however many take it at the same time.
func TestAccounts_LinkTakenOnce(t *testing.T) {
	st := testenv.Store(t, nil)
	a := st.Accounts()
	ctx := context.Background()
	secret, err := account.Link(ctx, a, account.Token{Purpose: account.PurposeReset, Email: "x@example.com", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := a.GetToken(ctx, account.HashSecret(secret)); err != nil || tok.Email != "x@example.com" {
		t.Fatalf("read before taking: %+v %v", tok, err)
	}
	var took atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			tok, err := a.TakeToken(ctx, account.HashSecret(secret))
			switch {
			case err == nil && tok.Purpose == account.PurposeReset:
				took.Add(1)
			case !errors.Is(err, account.ErrNotFound):
				t.Errorf("take: %v", err)
			}
		})
	}
	wg.Wait()
	if took.Load() != 1 {
		t.Errorf("the link was taken %d times, want once", took.Load())
	}
}

// Sessions are found by the hash of their id until deleted; members are
// added once and listed both ways; the audit log reads newest first.
func TestAccounts_SessionsMembersAudit(t *testing.T) {
	st := testenv.Store(t, nil)
	a := st.Accounts()
	ctx := context.Background()
	now := time.Now().UTC()
	h := account.HashSecret("session-id")
	if err := a.CreateSession(ctx, h, account.Session{Email: "s@example.com", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if s, err := a.GetSession(ctx, h); err != nil || s.Email != "s@example.com" {
		t.Fatalf("session %+v %v", s, err)
	}
	if err := a.DeleteSession(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetSession(ctx, h); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("a deleted session: %v", err)
	}
	m := account.Member{OrganizerID: "org_m", Email: "m@example.com", Role: account.Viewer, AddedAt: now}
	if err := a.AddMember(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := a.AddMember(ctx, m); !errors.Is(err, account.ErrExists) {
		t.Errorf("a second add: %v", err)
	}
	if ms, _ := a.ListMembers(ctx, "org_m"); len(ms) != 1 || ms[0].Role != account.Viewer {
		t.Errorf("members %v", ms)
	}
	if err := a.RemoveMember(ctx, "org_m", "m@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := a.RemoveMember(ctx, "org_m", "m@example.com"); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("removing twice: %v", err)
	}
	for i := range 3 {
		if err := a.AddEntry(ctx, account.Entry{OrganizerID: "org_m", At: now.Add(time.Duration(i) * time.Second), Action: fmt.Sprint("a", i)}); err != nil {
			t.Fatal(err)
		}
	}
	es, err := a.Entries(ctx, "org_m", 2)
	if err != nil || len(es) != 2 || es[0].Action != "a2" || es[1].Action != "a1" {
		t.Errorf("audit log %+v %v: want the two newest, newest first", es, err)
	}
}
