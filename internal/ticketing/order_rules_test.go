package ticketing_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// simulate-payment takes paid, cancelled or late_payment; anything else is
// refused with the parameter named, and the order does not move.
func TestSimulate_RefusesAnUnknownOutcome(t *testing.T) {
	d := newDomain(t)
	o := d.order(t, "sim-bad", gaOrder(1))
	_, err := d.sales.Orders.Simulate(context.Background(), d.c.Tenant, o.ID, "refunded")
	wantCode(t, err, ticketing.CodeInvalidRequest, "outcome")
	if got := d.get(t, o.ID); got.Status != ticketing.OrderPending || d.gaSold(t) != 1 {
		t.Fatalf("order %s, sold %d after a refused outcome; want pending, 1 sold", got.Status, d.gaSold(t))
	}
}

// simulate-payment cancelled answers with the cancelled order; asking again
// answers the same order and writes nothing more.
func TestSimulate_CancelledAnswersTheCancelledOrderOnce(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	o := d.order(t, "sim-cancel", gaOrder(1))
	for i := 0; i < 2; i++ {
		got, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomeCancelled)
		if err != nil || got == nil || got.Status != ticketing.OrderCancelled || got.CancelReason != "payment_cancelled" {
			t.Fatalf("simulate cancelled #%d: %+v, %v; want the order cancelled by its payment", i+1, got, err)
		}
	}
	if types := d.publishedTypes(o.ID); !reflect.DeepEqual(types, []string{ticketing.EventOrderCancelled}) {
		t.Fatalf("published %v, want one order.cancelled", types)
	}
}

// simulate-payment late_payment pays a cancelled test order after the fact:
// reinstated while its stock is there, refunded by the test provider (which
// settles on its own after its delay) when it is gone.
func TestSimulate_LatePaymentReinstatesOrRefunds(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	o := d.order(t, "sim-late", gaOrder(2))
	if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomeCancelled); err != nil {
		t.Fatal(err)
	}
	got, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomeLatePayment)
	if err != nil || got == nil || got.Status != ticketing.OrderPaid || got.LatePayment == nil ||
		got.LatePayment.Outcome != ticketing.LateReinstated || len(got.Tickets) != 2 || d.gaSold(t) != 2 {
		t.Fatalf("late payment: %+v, %v (sold %d); want reinstated with 2 tickets", got, err, d.gaSold(t))
	}
	if types := d.publishedTypes(o.ID); !reflect.DeepEqual(types, []string{ticketing.EventOrderCancelled, ticketing.EventOrderPaid}) {
		t.Fatalf("published %v, want order.cancelled then order.paid", types)
	}
	pending := d.order(t, "sim-late-pending", gaOrder(1))
	_, err = d.sales.Orders.Simulate(ctx, d.c.Tenant, pending.ID, ticketing.OutcomeLatePayment)
	wantCode(t, err, ticketing.CodeConflict, "")
}

// lateRefundPending is a cancelled test order whose late payment goes back
// because its stock went to another order: the test provider settles the
// refund on its own after RefundSettleAfter (a minute here).
func lateRefundPending(t *testing.T, d *domain, key string) *ticketing.Order {
	t.Helper()
	ctx := context.Background()
	o := d.order(t, key, gaOrder(2))
	if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomeCancelled); err != nil {
		t.Fatal(err)
	}
	d.order(t, key+"-taker", gaOrder(ticketingtest.GACap))
	got, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomeLatePayment)
	if err != nil || got.Status != ticketing.OrderCancelled || got.LatePayment == nil || got.LatePayment.Outcome != ticketing.LateRefundPending {
		t.Fatalf("late payment without stock: %+v, %v; want cancelled, refund pending", got, err)
	}
	if at := got.LatePayment.CheckAt; at == nil || !at.Equal(d.clk.Now().Add(time.Minute)) {
		t.Fatalf("late refund due %v, want the provider's settlement a minute on", at)
	}
	again, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomeLatePayment)
	if err != nil || again.LatePayment == nil || !reflect.DeepEqual(*again.LatePayment, *got.LatePayment) {
		t.Fatalf("late payment again: %+v, %v; want it unchanged", again, err)
	}
	return got
}

// A late payment's refund by a provider that settles on its own is
// recorded as refunded once its delay has passed, by a read.
func TestLatePayment_SelfSettlingRefundIsRefundedOnReadAfterItsDelay(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	o := lateRefundPending(t, d, "late-read")
	d.clk.Set(o.LatePayment.CheckAt.Add(-time.Second))
	if got, err := d.sales.Orders.Order(ctx, d.c.Tenant, o.ID); err != nil || got.LatePayment.Outcome != ticketing.LateRefundPending {
		t.Fatalf("read before the settlement: %+v, %v; want refund pending", got, err)
	}
	d.clk.Set(*o.LatePayment.CheckAt)
	got, err := d.sales.Orders.Order(ctx, d.c.Tenant, o.ID)
	if err != nil || got == nil || got.LatePayment.Outcome != ticketing.LateRefunded || got.LatePayment.RefundedAt == nil || got.Status != ticketing.OrderCancelled {
		t.Fatalf("read at the settlement: %+v, %v; want the late payment refunded, the order cancelled", got, err)
	}
	for _, tm := range mustDue(t, d, d.clk.Now().Add(24*time.Hour)) {
		if tm.OrderID == o.ID {
			t.Fatalf("timer %+v still owed after the late refund settled", tm)
		}
	}
}

// The same refund is recorded as refunded by its check, when no read comes.
func TestLatePayment_SelfSettlingRefundIsRefundedByItsCheck(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	o := lateRefundPending(t, d, "late-sweep")
	if last := d.queue.lastScheduled(o.ID); last.Kind != ticketing.TimerRefundCheck || !last.Due.Equal(*o.LatePayment.CheckAt) {
		t.Fatalf("last timer %+v, want the refund check at the settlement", last)
	}
	d.clk.Set(o.LatePayment.CheckAt.Add(d.sales.Deps.Settings.SweepGrace))
	if n, err := d.sales.Orders.SweepDue(ctx, 10); n != 1 || err != nil {
		t.Fatalf("sweep: %d, %v; want the refund check", n, err)
	}
	if got := d.get(t, o.ID); got.LatePayment.Outcome != ticketing.LateRefunded {
		t.Fatalf("late payment %+v after its check, want refunded", got.LatePayment)
	}
}

// A refund's reason is at most MaxRefundReason characters (runes, not bytes).
func TestRefundOrder_ReasonOfAtMost500Characters(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	for _, c := range []struct {
		n  int
		ok bool
	}{{ticketing.MaxRefundReason, true}, {ticketing.MaxRefundReason + 1, false}} {
		o := d.order(t, "reason-"+strings.Repeat("x", c.n%7), gaOrder(1))
		if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomePaid); err != nil {
			t.Fatal(err)
		}
		reason := strings.Repeat("é", c.n)
		r, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, o.ID, &reason)
		if !c.ok {
			wantCode(t, err, ticketing.CodeInvalidRequest, "reason")
			continue
		}
		if err != nil || r.Reason == nil || *r.Reason != reason {
			t.Fatalf("a reason of %d characters: %+v, %v; want the refund with it", c.n, r, err)
		}
	}
}

// GET /orders/{id}/refund is not_found until the order is refunded, then
// the refund.
func TestLatestRefund_NotFoundUntilRefunded(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	o := d.order(t, "latest", gaOrder(1))
	_, err := d.sales.Orders.LatestRefund(ctx, d.c.Tenant, o.ID)
	wantCode(t, err, ticketing.CodeNotFound, "")
	if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	r, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, o.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.sales.Orders.LatestRefund(ctx, d.c.Tenant, o.ID); err != nil || got.ID != r.ID {
		t.Fatalf("latest refund %+v, %v; want %s", got, err, r.ID)
	}
	_, err = d.sales.Orders.LatestRefund(ctx, d.c.Tenant, "ord_missing")
	wantCode(t, err, ticketing.CodeNotFound, "")
}

// A refund's settlement timer that arrives early is sent on again for its
// time; at its time it completes the refund, published once.
func TestHandleTimer_RefundSettleEarlyIsSentOnThenCompletes(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	o := d.order(t, "settle", gaOrder(1))
	if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	r, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, o.ID, nil)
	if err != nil || r.SettleAt == nil {
		t.Fatalf("refund %+v, %v", r, err)
	}
	want := ticketing.Timer{Kind: ticketing.TimerRefundSettle, OrderID: o.ID, Due: *r.SettleAt}
	d.queue.timers = nil
	if err := d.sales.Orders.HandleTimer(ctx, ticketing.Timer{Kind: ticketing.TimerRefundSettle, OrderID: o.ID, Due: d.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if got := d.queue.scheduled(o.ID); len(got) != 1 || got[0] != want || d.get(t, o.ID).Status != ticketing.OrderPaid {
		t.Fatalf("early settlement: scheduled %+v, order %s; want %+v sent on, the order paid", got, d.get(t, o.ID).Status, want)
	}
	d.clk.Set(*r.SettleAt)
	if err := d.sales.Orders.HandleTimer(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got := d.get(t, o.ID); got.Status != ticketing.OrderRefunded || got.Refund.Status != ticketing.RefundCompleted {
		t.Fatalf("order %s refund %+v at the settlement, want refunded", got.Status, got.Refund)
	}
	if types := d.publishedTypes(o.ID); !reflect.DeepEqual(types, []string{ticketing.EventOrderPaid, ticketing.EventOrderRefunded}) {
		t.Fatalf("published %v, want order.paid then order.refunded", types)
	}
}

// An expiry timer that arrives before the order's expiry is sent on again
// for the expiry, and the order stays pending.
func TestHandleTimer_EarlyExpiryIsSentOnAgain(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	o := d.order(t, "early", gaOrder(1))
	d.queue.timers = nil
	if err := d.sales.Orders.HandleTimer(ctx, ticketing.Timer{Kind: ticketing.TimerOrderExpiry, OrderID: o.ID, Due: d.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if got := d.queue.scheduled(o.ID); len(got) != 1 || got[0] != o.ExpiryTimer() || d.get(t, o.ID).Status != ticketing.OrderPending {
		t.Fatalf("scheduled %+v, order %s; want the expiry sent on, the order pending", got, d.get(t, o.ID).Status)
	}
	if err := d.sales.Orders.HandleTimer(ctx, ticketing.Timer{Kind: "order.unknown", OrderID: o.ID}); err == nil {
		t.Fatal("a timer of an unknown kind was accepted")
	}
}

// An order of a single event names no occurrence (the store's "-" for one
// stays inside the store).
func TestCreateOrder_ASingleEventsOrderNamesNoOccurrence(t *testing.T) {
	d := newDomain(t)
	if o := d.order(t, "single", gaOrder(1)); o.OccurrenceID != "" {
		t.Fatalf("occurrence %q, want none", o.OccurrenceID)
	}
}
