package emailjobs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/emailjobs"
	"tix/internal/emailsend"
	"tix/internal/ticketing"
)

// crashStore fails the first recording of a sent job: the consumer sent the
// message and then died (or lost the table) before recording it.
type crashStore struct {
	emailjobs.Store
	crashed atomic.Bool
}

func (c *crashStore) SaveJob(ctx context.Context, j *emailjobs.Job, due time.Time, ok bool) error {
	if j.Status == emailjobs.StatusSent && c.crashed.CompareAndSwap(false, true) {
		return errors.New("the consumer died after sending")
	}
	return c.Store.SaveJob(ctx, j, due, ok)
}

// A consumer that dies after the provider accepted the message but before it
// recorded the job: the job stays sending under its lease; once the lease
// ends the sweep sends it again. The buyer gets at most one duplicate, and
// nothing after the job is recorded sent sends it again.
func TestCrashAfterSendingGivesAtMostOneDuplicate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := &crashStore{Store: h.a.Store.Emails}
	h.svc.Store = cs
	o := h.paidOrder("buyer@example.com")
	id := o.ID + "/tickets"
	h.waitFor("the first send and the crash", func() bool { return len(h.rec.to("tickets")) == 1 && cs.crashed.Load() })
	j, err := h.a.Store.Emails.GetJob(h.ctx, id)
	if err != nil || j.Status != emailjobs.StatusSending {
		t.Fatalf("after the crash: %+v %v, want sending", j, err)
	}
	// Within the lease the sweep leaves it alone; after it, it sends again.
	if _, err := h.svc.Sweep(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(h.svc.Settings.Lease + time.Second)
	if _, err := h.svc.Sweep(h.ctx); err != nil {
		t.Fatal(err)
	}
	j = h.job(id)
	if j.Status != emailjobs.StatusSent || j.Attempts != 2 {
		t.Fatalf("after the sweep: %+v", j)
	}
	h.clk.Advance(time.Hour)
	for range 3 {
		if _, err := h.svc.Sweep(h.ctx); err != nil {
			t.Fatal(err)
		}
		if err := h.svc.Handle(h.ctx, emailjobs.Message{Kind: emailjobs.KindEmail, JobID: id, Due: h.clk.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// The swept messages find the job sent (the crashed message, back after
	// its visibility timeout, too); give the consumer a moment to prove it.
	time.Sleep(500 * time.Millisecond)
	if n := len(h.rec.to("tickets")); n != 2 {
		t.Fatalf("%d tickets emails after one crash, want 2 (one duplicate)", n)
	}
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	h.waitForIn(15*time.Second, what, cond)
}

func (h *harness) waitForIn(d time.Duration, what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An address the provider refuses for good is rejected at once, without a
// retry, and the order stays paid; a suppressed address is never sent to.
func TestRejectedAndSuppressedAddressesNeverFailTheOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.rec.fail = func(int) error { return errWrap{emailsend.ErrRejected, "550 5.1.1 <nobody@example.com> unknown user"} }
	o := h.paidOrder("nobody@example.com")
	j := h.job(o.ID + "/tickets")
	if j.Status != emailjobs.StatusRejected || j.Attempts != 1 || strings.Contains(j.LastError, "nobody@") {
		t.Fatalf("rejected job %+v", j)
	}
	if got, err := h.a.Store.Orders.GetOrder(h.ctx, o.ID); err != nil || got.Status != ticketing.OrderPaid {
		t.Fatalf("order after a rejected email: %+v %v", got, err)
	}

	h.rec.fail = nil
	if err := h.a.Store.Emails.Suppress(h.ctx, emailjobs.Suppression{Address: "Bounced@Example.com", Reason: "bounce", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// SES's permanent bounce, through the SNS handler's path.
	raw, err := os.ReadFile(filepath.Join("testdata", "ses-bounce-permanent.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := emailjobs.ApplySESNotification(h.ctx, h.a.Store.Emails, raw); err != nil || n != 1 {
		t.Fatalf("apply SES bounce: %d %v", n, err)
	}
	if sup, err := h.a.Store.Emails.Suppressed(h.ctx, "bounce@simulator.amazonses.com"); err != nil || !sup {
		t.Fatalf("the bounced address is not suppressed: %v %v", sup, err)
	}
	if sup, _ := h.a.Store.Emails.Suppressed(h.ctx, "buyer@example.com"); sup {
		t.Fatal("an address never bounced is suppressed")
	}
	o = h.paidOrder("bounced@example.com")
	j = h.job(o.ID + "/tickets")
	if j.Status != emailjobs.StatusSuppressed || len(h.rec.to("tickets")) != 0 {
		t.Fatalf("suppressed job %+v, %d sent", j, len(h.rec.to("tickets")))
	}
}

type errWrap struct {
	err error
	msg string
}

func (e errWrap) Error() string { return e.msg }
func (e errWrap) Unwrap() error { return e.err }

// A provider that keeps failing: the job is retried with backoff up to its
// attempts, then failed with the error recorded without the address.
func TestFailingProviderIsRetriedThenFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.rec.fail = func(int) error { return errors.New("421 try later for buyer@example.com") }
	o := h.paidOrder("buyer@example.com")
	j := h.job(o.ID + "/tickets")
	if j.Status != emailjobs.StatusFailed || j.Attempts != 3 || j.LastError != "421 try later for <address>" {
		t.Fatalf("failed job %+v", j)
	}
	views, err := h.svc.OrderStatus(h.ctx, o.ID)
	if err != nil || len(views) != 1 || views[0].Status != emailjobs.StatusFailed || views[0].LastError == nil {
		t.Fatalf("status %+v %v", views, err)
	}
}

// A refund sends its confirmation once; a resend sends the tickets again,
// once per call id.
func TestRefundAndResend(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.paidOrder("buyer@example.com")
	h.job(o.ID + "/tickets")
	for _, call := range []string{"call-1", "call-1", "call-2"} {
		if _, _, err := h.svc.Resend(h.ctx, o.ID, call); err != nil {
			t.Fatal(err)
		}
	}
	h.job(o.ID + "/resend.call-1")
	h.job(o.ID + "/resend.call-2")
	if _, _, err := h.svc.Resend(h.ctx, o.ID, "bad/id"); !ticketing.IsCode(err, ticketing.CodeInvalidRequest) {
		t.Errorf("bad call id: %v", err)
	}
	if _, err := h.a.Sales.Orders.RefundOrder(h.ctx, tenant, o.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.a.Sales.Tests.RefundOutcome(h.ctx, tenant, o.ID, "settle"); err != nil { // settles now (the test helper)
		t.Fatal(err)
	}
	j := h.job(o.ID + "/refund")
	if j.Status != emailjobs.StatusSent {
		t.Fatalf("refund job %+v", j)
	}
	h.settled()
	if n, r := len(h.rec.to("resend")), len(h.rec.to("refund")); n != 2 || r != 1 {
		t.Fatalf("%d resends, %d refunds; want 2 and 1", n, r)
	}
	views, err := h.svc.OrderStatus(h.ctx, o.ID)
	if err != nil || len(views) != 4 {
		t.Fatalf("status %+v %v", views, err)
	}
	// The refunded order's tickets are not sent again, nor by a job owed
	// from before the refund.
	if _, _, err := h.svc.Resend(h.ctx, o.ID, "call-3"); !ticketing.IsCode(err, ticketing.CodeConflict) {
		t.Errorf("resend of a refunded order: %v", err)
	}
	now := h.clk.Now()
	late := &emailjobs.Job{Subject: o.ID, Name: "resend.late", Kind: emailjobs.KindResend, OrganizerID: o.OrganizerID,
		Environment: o.Environment, OrderID: o.ID, Status: emailjobs.StatusPending, MaxAttempts: 3, NextAttemptAt: now, CreatedAt: now}
	if _, err := h.a.Store.Emails.CreateJobs(h.ctx, []*emailjobs.Job{late}); err != nil {
		t.Fatal(err)
	}
	h.svc.Enqueue(h.ctx, []*emailjobs.Job{late})
	if j := h.job(late.ID()); j.Status != emailjobs.StatusFailed || !strings.Contains(j.LastError, "refunded") {
		t.Errorf("a tickets job of a refunded order: %+v", j)
	}
	if n := len(h.rec.to("resend")); n != 2 {
		t.Errorf("%d resends sent, want 2", n)
	}
}

func TestValidAddress(t *testing.T) {
	for addr, want := range map[string]bool{
		"a@example.com": true, "Bob <a@example.com>": false, "a@example.com, b@example.com": false,
		"": false, "no-at": false, " a@example.com": false,
	} {
		if got := emailjobs.ValidAddress(addr); got != want {
			t.Errorf("ValidAddress(%q) = %v, want %v", addr, got, want)
		}
	}
}
