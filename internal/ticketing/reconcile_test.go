package ticketing_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// A live order read at its expiry asks the acquirer first, in case its
// notification was lost: paid by then, it is paid and its ticket issued;
// failed, it is cancelled for the failure (not as expired), its stock back.
func TestReconcile_AtExpiryTheAcquirersAnswerDecides(t *testing.T) {
	for _, c := range []struct {
		answer ticketing.PaymentStatus
		status ticketing.OrderStatus
		reason string
		sold   int
	}{
		{ticketing.PaymentPaid, ticketing.OrderPaid, "", 1},
		{ticketing.PaymentFailed, ticketing.OrderCancelled, "payment_failed", 0},
	} {
		d, acq := liveDomain(t)
		o := d.order(t, "expiry-"+string(c.answer), gaOrder(1))
		acq.set(o.Payment.ID, c.answer)
		d.clk.Set(o.ExpiresAt)
		got, err := d.sales.Orders.Order(context.Background(), d.c.Tenant, o.ID)
		if err != nil || got.Status != c.status || got.CancelReason != c.reason || len(got.Tickets) != c.sold || d.liveSold(t) != c.sold {
			t.Fatalf("%s at expiry: %+v, %v (sold %d); want %s %q with %d sold", c.answer, got, err, d.liveSold(t), c.status, c.reason, c.sold)
		}
	}
}

// At expiry, an answer of the acquirer that cannot be applied (money of
// another amount, whose return fails) does not keep the order: it expires,
// and the payment check after the grace period asks again.
func TestReconcile_AtExpiryAnAnswerThatCannotBeAppliedStillExpires(t *testing.T) {
	d, acq := liveDomain(t)
	acq.down = true
	o := d.order(t, "expiry-unapplied", gaOrder(2)) // 3,000.00; the acquirer reports 1,500.00 paid
	acq.set(o.Payment.ID, ticketing.PaymentPaid)
	d.clk.Set(o.ExpiresAt)
	got, err := d.sales.Orders.Order(context.Background(), d.c.Tenant, o.ID)
	if err != nil || got.Status != ticketing.OrderCancelled || got.CancelReason != "expired" || got.PaymentCheckAt == nil || d.liveSold(t) != 0 {
		t.Fatalf("read at expiry: %+v, %v (sold %d); want expired, a payment check owed, stock back", got, err, d.liveSold(t))
	}
}

// A live late payment's refund is checked until the acquirer reports the
// money back: while it still reports the payment paid (the refund request
// was lost), the refund of the late payment is asked for again.
func TestReconcile_LateRefundCheckAsksAgainUntilTheMoneyIsBack(t *testing.T) {
	d, acq := liveDomain(t)
	ctx := context.Background()
	acq.refundTo = ticketing.PaymentPaid      // refund requests are lost at the acquirer
	o := d.order(t, "late-check", gaOrder(1)) // the acquirer reports 1,500.00
	d.clk.Set(o.ExpiresAt)
	if _, err := d.sales.Orders.Order(ctx, d.c.Tenant, o.ID); err != nil {
		t.Fatal(err)
	}
	taker := d.order(t, "late-check-taker", gaOrder(ticketingtest.GACap))
	d.update(t, taker, ticketing.PaymentPaid, taker.TotalPrice)
	acq.set(o.Payment.ID, ticketing.PaymentPaid)
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice)
	if got := d.get(t, o.ID); got.LatePayment == nil || got.LatePayment.Outcome != ticketing.LateRefundPending || acq.refundCount() != 1 {
		t.Fatalf("late payment %+v, refunds %d; want refund pending, asked once", got.LatePayment, acq.refundCount())
	}
	every := d.sales.Deps.Settings.RefundCheckEvery
	d.clk.Set(d.clk.Now().Add(every + d.sales.Deps.Settings.SweepGrace))
	if n, err := d.sales.Orders.SweepDue(ctx, 10); n != 1 || err != nil {
		t.Fatalf("sweep: %d, %v; want the late refund's check", n, err)
	}
	if acq.refundCount() < 2 {
		t.Fatalf("refund requests %+v, want the late payment's refund asked again", acq.refunds)
	}
	for _, r := range acq.refunds {
		if r.RefundID != acq.refunds[0].RefundID || r.PaymentID != o.Payment.ID || r.Amount != o.TotalPrice {
			t.Fatalf("refund requests %+v, want each the late payment's one refund (idempotent at the acquirer)", acq.refunds)
		}
	}
	next := d.clk.Now().Add(every)
	if lp := d.get(t, o.ID).LatePayment; lp.Outcome != ticketing.LateRefundPending || lp.CheckAt == nil || !lp.CheckAt.Equal(next) {
		t.Fatalf("late payment %+v after the check, want refund pending, checked again at %s", lp, next)
	}
	acq.set(o.Payment.ID, ticketing.PaymentRefunded)
	d.clk.Set(next.Add(d.sales.Deps.Settings.SweepGrace))
	if n, err := d.sales.Orders.SweepDue(ctx, 10); n != 1 || err != nil {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	if lp := d.get(t, o.ID).LatePayment; lp.Outcome != ticketing.LateRefunded {
		t.Fatalf("late payment %+v, want refunded", lp)
	}
	for _, tm := range mustDue(t, d, d.clk.Now().Add(24*time.Hour)) {
		if tm.OrderID == o.ID {
			t.Errorf("timer %+v still owed after the late refund settled", tm)
		}
	}
}
