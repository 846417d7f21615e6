package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/emailjobs"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// N+k charges at once against one recipient's day, each for a job of its
// own, let exactly N through; the same job charged again still counts once
// (a retried send), and another organizer, address or day has a cap of its own.
func TestChargeRecipient_ExactlyTheCapUnderConcurrency(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t, nil)
	ctx := context.Background()
	const limit, extra = 5, 7
	var ok atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, limit+extra)
	for i := range limit + extra {
		wg.Go(func() {
			got, err := st.Emails.ChargeRecipient(ctx, "org_cap", "Anna@Example.com", "2026-11-25", fmt.Sprintf("ord_%d/tickets", i), limit)
			if err != nil {
				errs <- err
			}
			if got {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ok.Load() != limit {
		t.Fatalf("%d of %d charges went through, want exactly %d", ok.Load(), limit+extra, limit)
	}
	// Which jobs went through: charging one of them again is still fine.
	var through string
	for i := range limit + extra {
		id := fmt.Sprintf("ord_%d/tickets", i)
		if got, err := st.Emails.ChargeRecipient(ctx, "org_cap", "anna@example.com", "2026-11-25", id, limit); err == nil && got {
			through = id
			break
		}
	}
	if through == "" {
		t.Fatal("no job that was charged is charged again (a retried send would be skipped)")
	}
	for _, c := range []struct{ org, addr, day string }{
		{"org_other", "anna@example.com", "2026-11-25"}, {"org_cap", "bob@example.com", "2026-11-25"}, {"org_cap", "anna@example.com", "2026-11-26"},
	} {
		if got, err := st.Emails.ChargeRecipient(ctx, c.org, c.addr, c.day, "ord_new/tickets", limit); err != nil || !got {
			t.Errorf("%+v: charged %v %v, want its own cap", c, got, err)
		}
	}
}

// The test allow-list: addresses are kept normalized, once each, at most
// emailjobs.MaxTestRecipients; removing takes one off; an unknown organizer is
// not_found; set-contacts and the allow-list do not overwrite each other.
func TestTestRecipients_AddRemoveAndBound(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t, nil)
	ctx := context.Background()
	if err := st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_tr", Name: "TR", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Emails.SetContacts(ctx, "org_tr", []string{"owner@example.com"}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"Dev@Example.com", "dev@example.com", "qa@example.com"} {
		if _, err := st.Emails.AddTestRecipient(ctx, "org_tr", a); err != nil {
			t.Fatal(err)
		}
	}
	id, err := st.Emails.GetIdentity(ctx, "org_tr")
	if err != nil || !slices.Equal(id.TestRecipients, []string{"dev@example.com", "qa@example.com"}) || !slices.Equal(id.Contacts, []string{"owner@example.com"}) {
		t.Fatalf("identity %+v %v", id, err)
	}
	if !id.OwnAddress("QA@example.com") || !id.OwnAddress("owner@example.com") || id.OwnAddress("stranger@example.com") {
		t.Errorf("OwnAddress of %+v", id)
	}
	if id, err = st.Emails.RemoveTestRecipient(ctx, "org_tr", "QA@example.com"); err != nil || !slices.Equal(id.TestRecipients, []string{"dev@example.com"}) {
		t.Fatalf("after remove: %+v %v", id, err)
	}
	for i := range emailjobs.MaxTestRecipients - 1 {
		if _, err := st.Emails.AddTestRecipient(ctx, "org_tr", fmt.Sprintf("t%d@example.com", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Emails.AddTestRecipient(ctx, "org_tr", "one-more@example.com"); !ticketing.IsCode(err, ticketing.CodeConflict) {
		t.Errorf("recipient %d: %v, want conflict", emailjobs.MaxTestRecipients+1, err)
	}
	if _, err := st.Emails.AddTestRecipient(ctx, "org_tr", "t0@example.com"); err != nil {
		t.Errorf("adding one that is there, at the bound: %v", err)
	}
	if _, err := st.Emails.AddTestRecipient(ctx, "org_nobody", "dev@example.com"); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Errorf("unknown organizer: %v, want not_found", err)
	}
}

// A sender name that could pass for an address is refused where it is set.
func TestSetIdentity_SenderNameMayNotLookLikeAnAddress(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t, nil)
	ctx := context.Background()
	if err := st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_sn", Name: "SN", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"support@bank.example", "Bank <support@bank.example>", "Acme >", "Acme\r\nBcc: x"} {
		_, err := st.Emails.SetIdentity(ctx, "org_sn", map[string]string{"sender_name": name})
		var te *ticketing.Error
		if !ticketing.IsCode(err, ticketing.CodeInvalidRequest) || !errors.As(err, &te) || te.Param != "sender_name" {
			t.Errorf("sender name %q: %v, want invalid_request on sender_name", name, err)
		}
	}
	if id, err := st.Emails.SetIdentity(ctx, "org_sn", map[string]string{"sender_name": "Acme Live"}); err != nil || id.From() != "Acme Live" {
		t.Errorf("a plain name: %+v %v", id, err)
	}
}
