package ticketing

import (
	"context"
	"time"
)

// Timer kinds: delayed work carried by the timers queue.
const (
	TimerOrderExpiry  = "order.expire"  // cancel a pending order that was not paid in time
	TimerRefundSettle = "refund.settle" // the test provider's refund returns the money
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

// SettleTimer is the timer that settles the order's refund; false when the
// order has no refund or its provider reports settlement itself (no timer).
func (o *Order) SettleTimer() (Timer, bool) {
	if o.Refund == nil || o.Refund.SettleAt == nil {
		return Timer{}, false
	}
	return Timer{Kind: TimerRefundSettle, OrderID: o.ID, Due: *o.Refund.SettleAt}, true
}
