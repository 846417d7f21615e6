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
