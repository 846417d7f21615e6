package emailjobs_test

import (
	"strconv"
	"testing"
	"time"

	"tix/internal/emailjobs"
)

// TestConsumerThroughput sends 100 resend jobs of one paid order through
// the consumer and reports the rate (the figure in docs/measurements.md); each is sent
// exactly once.
func TestConsumerThroughput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.paidOrder("buyer@example.com")
	h.job(o.ID + "/tickets")
	const n = 100
	now := time.Now().UTC()
	jobs := make([]*emailjobs.Job, n)
	for i := range jobs {
		jobs[i] = &emailjobs.Job{Subject: o.ID, Name: "resend.t" + strconv.Itoa(i), Kind: emailjobs.KindResend, OrganizerID: o.OrganizerID,
			Environment: o.Environment, OrderID: o.ID, Status: emailjobs.StatusPending, MaxAttempts: 3, NextAttemptAt: now, CreatedAt: now}
	}
	if _, err := h.a.Store.Emails.CreateJobs(h.ctx, jobs); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h.svc.Enqueue(h.ctx, jobs)
	h.waitForIn(60*time.Second, "every resend sent", func() bool { return len(h.rec.to("resend")) == n })
	d := time.Since(start)
	t.Logf("%d emails in %s: %.0f emails/s on one consumer (enqueueing included)", n, d.Round(time.Millisecond), n/d.Seconds())
	if len(h.rec.to("resend")) != n {
		t.Fatalf("%d sent", len(h.rec.to("resend")))
	}
}
