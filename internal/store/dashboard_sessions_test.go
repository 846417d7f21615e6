package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/testenv"
)

// Each password change adds one to the user's session epoch, however many
// run at once (one update each, no read-modify-write), so no concurrent
// reset is lost and every earlier session stays ended.
func TestAccounts_SetPasswordCountsEveryChange(t *testing.T) {
	st := testenv.Store(t, nil)
	a := st.Accounts()
	ctx := context.Background()
	now := time.Now().UTC()
	if err := a.CreateUser(ctx, account.User{Email: "epoch@example.com", PasswordHash: "h0", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := a.SetPassword(ctx, "epoch@example.com", "h1"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	u, err := a.GetUser(ctx, "epoch@example.com")
	if err != nil || u.SessionEpoch != n || u.PasswordHash != "h1" {
		t.Fatalf("user %+v, %v: want epoch %d", u, err, n)
	}
	if err := a.SetPassword(ctx, "nobody@example.com", "h"); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("password of an unknown user: %v", err)
	}
}

// An organizer's time zone is set whether or not it has a settings item.
func TestAccounts_SetTimeZone(t *testing.T) {
	st := testenv.Store(t, nil)
	a := st.Accounts()
	ctx := context.Background()
	if err := a.SetTimeZone(ctx, "org_tz", "Asia/Omsk"); err != nil {
		t.Fatal(err)
	}
	if s, err := a.GetSettings(ctx, "org_tz"); err != nil || s.TimeZone != "Asia/Omsk" || s.OrganizerID != "org_tz" {
		t.Fatalf("settings %+v, %v", s, err)
	}
	if err := a.SetTimeZone(ctx, "org_tz", "UTC"); err != nil {
		t.Fatal(err)
	}
	if s, _ := a.GetSettings(ctx, "org_tz"); s.TimeZone != "UTC" {
		t.Errorf("time zone %s", s.TimeZone)
	}
}
