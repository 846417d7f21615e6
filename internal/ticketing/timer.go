package ticketing

import (
	"context"
	"time"
)

// Timer kinds: delayed work carried by the timers queue.
const (
	TimerOrderExpiry  = "order.expire"  // cancel a pending order that was not paid in time
	TimerRefundSettle = "refund.settle" // the test provider's refund returns the money
	// TimerPaymentCheck asks the live acquirer, a grace period after a live
	// order was cancelled, whether its payment went through after all.
	TimerPaymentCheck = "payment.check"
	// TimerRefundCheck asks the live acquirer how a refund is going (the
	// order's, or a late payment's), until it is settled.
	TimerRefundCheck = "refund.check"
	// TimerStrayCheck asks the live acquirer how the refund of an order's
	// stray payments is going, until each is settled (see StrayPayment).
	TimerStrayCheck = "stray.check"
)

// Timer is one piece of delayed work: do Kind for OrderID at Due. A queue can
// delay a message at most 15 minutes, so a longer wait is several hops; each hop
// carries Due, and a handler that receives a timer early sends it on again.
type Timer struct {
	Kind    string    `json:"kind"`
	OrderID string    `json:"order_id"`
	Due     time.Time `json:"due"`
}

// Scheduler sends a timer so that it is handled at (or soon after) Due.
type Scheduler interface {
	Schedule(ctx context.Context, t Timer) error
}

// Every timer-driven transition has a marker in storage, written in the same
// transaction as the change that starts the wait and deleted in the one that
// ends it; the sweep finds the markers that are due (DueTimerStore.DueTimers) and
// does their work, so a timer whose message was lost still fires. A new timer
// kind needs its marker written and deleted in its transactions and a case in
// HandleTimer.

// ExpiryTimer is the timer that expires the order while it is pending.
func (o *Order) ExpiryTimer() Timer {
	return Timer{Kind: TimerOrderExpiry, OrderID: o.ID, Due: o.ExpiresAt}
}

// SettleTimer is the timer that settles the order's refund: at SettleAt when
// the provider settles on its own, else the reconciliation of a live refund
// at CheckAt; false when the order has no refund under way.
func (o *Order) SettleTimer() (Timer, bool) {
	switch r := o.Refund; {
	case r == nil:
	case r.SettleAt != nil:
		return Timer{Kind: TimerRefundSettle, OrderID: o.ID, Due: *r.SettleAt}, true
	case r.CheckAt != nil:
		return Timer{Kind: TimerRefundCheck, OrderID: o.ID, Due: *r.CheckAt}, true
	}
	return Timer{}, false
}

// CheckTimer is the reconciliation a cancelled live order (or its late
// payment's refund) still waits for; false when none is owed.
func (o *Order) CheckTimer() (Timer, bool) {
	if lp := o.LatePayment; lp != nil {
		if lp.Outcome == LateRefundPending && lp.CheckAt != nil {
			return Timer{Kind: TimerRefundCheck, OrderID: o.ID, Due: *lp.CheckAt}, true
		}
		return Timer{}, false
	}
	if o.Status == OrderCancelled && o.PaymentCheckAt != nil {
		return Timer{Kind: TimerPaymentCheck, OrderID: o.ID, Due: *o.PaymentCheckAt}, true
	}
	return Timer{}, false
}
