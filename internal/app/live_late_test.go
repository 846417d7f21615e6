package app_test

import (
	"net/http"
	"testing"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
	"tix/internal/testenv"
)

// expired creates a live order of qty and waits until it is cancelled by
// expiry (the bank still has its payment open).
func (s *liveStack) expired(key string, qty int) string {
	s.t.Helper()
	code, o := s.order(key, qty)
	if code != http.StatusCreated {
		s.t.Fatalf("order: %d %v", code, o)
	}
	id := o["id"].(string)
	s.waitStatus(id, "cancelled", 10*time.Second)
	return id
}

// Money confirmed after the order expired, while its stock is still there:
// the order is reinstated as paid, with order.paid, and says so.
func TestLive_LatePaymentIsReinstatedWhenTheStockIsStillThere(t *testing.T) {
	opts := quick
	opts.orderTTL = 2 * time.Second
	s := newLiveStack(t, opts)
	id := s.expired("e2e-late-ok", 2)
	s.sim.SetFaults(tbanksim.Faults{ConfirmAfterDeadline: true})
	if p, err := s.sim.Settle(id, tbanksim.Pay); err != nil || p.Status != tbank.StatusConfirmed {
		t.Fatalf("late pay: %+v %v", p, err)
	}
	o := s.waitStatus(id, "paid", 10*time.Second)
	lp, _ := o["late_payment"].(map[string]any)
	if lp["outcome"] != "reinstated" || lp["cancelled_at"] == nil || o["is_paid"] != true {
		t.Fatalf("order %v: want paid with late_payment.outcome reinstated", o)
	}
	if code, tk := s.call("GET", "/orders/"+id+"/tickets", ""); code != http.StatusOK || len(tk["tickets"].([]any)) != 2 {
		t.Fatalf("tickets of the reinstated order: %d %v", code, tk)
	}
	if evs := s.waitEvents("order.paid", id, 1); len(evs) != 1 || !evs[0].Order.Livemode {
		t.Fatalf("order.paid events %+v: want one, live", evs)
	}
	if code, av := s.call("GET", "/events/"+liveEvent+"/availability", ""); code != http.StatusOK {
		t.Fatalf("availability: %d %v", code, av)
	} else if n := availableOf(av); n != 8 {
		t.Errorf("available %d after the reinstated order of 2 (of 10), want 8", n)
	}
}

// Money confirmed after the order expired, when its stock went to another
// buyer: the money goes back (Cancel at the bank), the order stays cancelled
// and says so; it is never kept without tickets.
func TestLive_LatePaymentIsRefundedWhenTheStockIsGone(t *testing.T) {
	opts := quick
	opts.orderTTL, opts.capacity, opts.refundCheck = 2*time.Second, 1, 500*time.Millisecond
	s := newLiveStack(t, opts)
	late := s.expired("e2e-late-gone", 1)
	code, other := s.order("e2e-late-other", 1) // the last ticket goes to someone else
	if code != http.StatusCreated {
		t.Fatalf("the other buyer's order: %d %v", code, other)
	}
	s.sim.SetFaults(tbanksim.Faults{ConfirmAfterDeadline: true})
	if _, err := s.sim.Settle(late, tbanksim.Pay); err != nil {
		t.Fatal(err)
	}
	var o map[string]any
	testenv.WaitFor(t, 10*time.Second, "the late payment refunded", func() bool {
		_, o = s.call("GET", "/orders/"+late, "")
		lp, _ := o["late_payment"].(map[string]any)
		return lp["outcome"] == "refunded"
	})
	if o["status"] != "cancelled" || o["is_paid"] != false || o["late_payment"].(map[string]any)["refunded_at"] == nil {
		t.Fatalf("order %v: want cancelled, late payment refunded", o)
	}
	if p := s.sim.Payments(late)[0]; p.Status != tbank.StatusRefunded || p.Refunded != p.Amount {
		t.Fatalf("bank payment %+v: want REFUNDED in full", p)
	}
	if n := len(s.hooks.events(t, "order.paid", late)); n != 0 {
		t.Errorf("%d order.paid for the refunded late payment, want 0", n)
	}
	if st := s.status(other["id"].(string)); st == "paid" || st == "refunded" {
		t.Errorf("the other buyer's order is %s: the late payment must not touch it", st)
	}
}

// A payment the buyer's bank rejects ends the order at once (stock back).
func TestLive_RejectedPaymentCancelsTheOrder(t *testing.T) {
	s := newLiveStack(t, quick)
	_, o := s.order("e2e-reject", 1)
	id := o["id"].(string)
	if _, err := s.sim.Settle(id, tbanksim.Reject); err != nil {
		t.Fatal(err)
	}
	s.waitStatus(id, "cancelled", 10*time.Second)
}

// The bank's REFUNDED notification is lost: reconciliation asks for the
// refund's state until it is settled, and the order ends refunded.
func TestLive_LostRefundNotificationIsRecoveredByReconciliation(t *testing.T) {
	opts := quick
	opts.refundCheck = time.Second
	s := newLiveStack(t, opts)
	_, o := s.order("e2e-refund-lost", 1)
	id := o["id"].(string)
	if _, err := s.sim.Settle(id, tbanksim.Pay); err != nil {
		t.Fatal(err)
	}
	s.waitStatus(id, "paid", 10*time.Second)
	s.sim.SetFaults(tbanksim.Faults{Lose: true})
	if code, r := s.call("POST", "/orders/"+id+"/refund", ""); code != http.StatusOK {
		t.Fatalf("refund: %d %v", code, r)
	}
	testenv.WaitFor(t, 5*time.Second, "the bank's refund", func() bool { return s.sim.Payments(id)[0].Status == tbank.StatusRefunded })
	if st := s.status(id); st != "paid" {
		t.Fatalf("with REFUNDED lost the order is %s, want still paid (refund pending)", st)
	}
	s.waitStatus(id, "refunded", 15*time.Second)
	if evs := s.waitEvents("order.refunded", id, 1); len(evs) != 1 {
		t.Fatalf("order.refunded events %+v, want one", evs)
	}
}

func availableOf(av map[string]any) int {
	n, _ := av["total_available"].(float64)
	return int(n)
}
