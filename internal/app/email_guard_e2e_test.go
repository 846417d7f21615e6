package app_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"tix/internal/emailjobs"
	"tix/internal/emailsend/emailtest"
)

// A test-mode order's email reaches only the organizer's own addresses: an
// owner contact and a test recipient get their tickets; a stranger's job is
// skipped with reason test_mode and nothing reaches the stranger's inbox.
func TestEmail_TestModeMailsOnlyTheOrganizersOwnAddresses(t *testing.T) {
	m := newMailStack(t, nil)
	contact, listed, stranger := emailtest.NewAddress("owner"), emailtest.NewAddress("dev"), emailtest.NewAddress("stranger")
	if _, err := m.app.Store.Emails.SetContacts(m.ctx, "org_mail", []string{contact}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.app.Store.Emails.AddTestRecipient(m.ctx, "org_mail", listed); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{contact, listed} {
		o := m.paidOrder(t, to, 1)
		if j := m.job(t, o.ID+"/tickets"); j.Status != emailjobs.StatusSent || j.Reason != "" {
			t.Errorf("the tickets job of an organizer's own address: %s %q", j.Status, j.Reason)
		}
		if n, err := m.inbox.Count(m.ctx, to); err != nil || n != 1 {
			t.Errorf("%d emails in the organizer's own inbox (%v), want 1", n, err)
		}
	}
	o := m.paidOrder(t, stranger, 2)
	j := m.job(t, o.ID+"/tickets")
	if j.Status != emailjobs.StatusSkipped || j.Reason != emailjobs.ReasonTestMode || j.LastError != "" || j.ProviderID != "" {
		t.Fatalf("a stranger's test-mode job: status %s, reason %q, error %q, provider id %q; want skipped, test_mode", j.Status, j.Reason, j.LastError, j.ProviderID)
	}
	time.Sleep(time.Second) // room for a message, were one sent
	if n, err := m.inbox.Count(m.ctx, stranger); err != nil || n != 0 {
		t.Fatalf("%d emails reached the stranger (%v), want none", n, err)
	}
}

// The daily cap per recipient and organizer holds under concurrency: with
// TIX_MAIL_RECIPIENT_DAILY_CAP=3, the tickets email and six resends of one
// paid order, the resends handled all at once (by the consumer and by six
// direct calls), put exactly 3 messages in the buyer's inbox; the other four
// jobs are skipped (recipient_daily_cap).
func TestEmail_RecipientDailyCapSendsExactlyTheCapInParallel(t *testing.T) {
	const limit, resends = 3, 6
	m := newMailStack(t, map[string]string{"TIX_MAIL_RECIPIENT_DAILY_CAP": strconv.Itoa(limit)})
	buyer := emailtest.NewAddress("capped")
	if _, err := m.app.Store.Emails.AddTestRecipient(m.ctx, "org_mail", buyer); err != nil {
		t.Fatal(err)
	}
	o := m.paidOrder(t, buyer, 1)
	if j := m.job(t, o.ID+"/tickets"); j.Status != emailjobs.StatusSent {
		t.Fatalf("tickets job %s", j.Status)
	}
	jobs := make([]*emailjobs.Job, resends)
	for i := range jobs {
		j, _, err := m.app.Email.Resend(m.ctx, o.ID, "cap"+strconv.Itoa(i)) // queued: the consumer races the calls below
		if err != nil {
			t.Fatal(err)
		}
		jobs[i] = j
	}
	now := time.Now().UTC()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			if err := m.app.Email.Handle(m.ctx, emailjobs.Message{Kind: emailjobs.KindEmail, JobID: j.ID(), Due: now}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	sent, capped := 0, 0
	for _, j := range jobs {
		switch got := m.job(t, j.ID()); {
		case got.Status == emailjobs.StatusSent:
			sent++
		case got.Status == emailjobs.StatusSkipped && got.Reason == emailjobs.ReasonRecipientDailyCap:
			capped++
		default:
			t.Errorf("job %s: %s %q", got.ID(), got.Status, got.Reason)
		}
	}
	if sent != limit-1 || capped != resends-(limit-1) {
		t.Errorf("%d resends sent and %d capped, want %d and %d", sent, capped, limit-1, resends-(limit-1))
	}
	time.Sleep(time.Second)
	if n, err := m.inbox.Count(m.ctx, buyer); err != nil || n != limit {
		t.Fatalf("%d emails in the buyer's inbox (%v), want exactly the cap, %d", n, err, limit)
	}
}
