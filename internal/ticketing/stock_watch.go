package ticketing

import (
	"context"
	"time"
)

// Watch returns st telling rc of every stock change it makes: after each
// write that can move an event's stock (a hold, a seat released, an order
// created, paid, cancelled or expired, reinstated, refunded), whether it
// succeeded or not (a failed write may still have committed), the event's
// views are dropped, so this process never serves a view older than its own
// sales. A nil rc returns st itself.
//
// A new SalesStore method that moves stock must be added here.
func (rc *ReadCache) Watch(st SalesStore) SalesStore {
	if rc == nil {
		return st
	}
	return &stockWatch{SalesStore: st, views: rc}
}

type stockWatch struct {
	SalesStore
	views *ReadCache
}

func (w *stockWatch) order(o *Order) {
	w.views.Invalidate(Tenant{OrganizerID: o.OrganizerID, Environment: o.Environment}, o.EventID)
}

func (w *stockWatch) hold(h *Hold) {
	w.views.Invalidate(Tenant{OrganizerID: h.OrganizerID, Environment: h.Environment}, h.EventID)
}

func (w *stockWatch) CreateHold(ctx context.Context, h *Hold, idem *Idempotency, ip *HoldIPUpdate, now time.Time) error {
	defer w.hold(h)
	return w.SalesStore.CreateHold(ctx, h, idem, ip, now)
}

func (w *stockWatch) ReleaseSeat(ctx context.Context, h *Hold, s HoldSeat, now time.Time) (bool, error) {
	defer w.hold(h)
	return w.SalesStore.ReleaseSeat(ctx, h, s, now)
}

func (w *stockWatch) CreateOrder(ctx context.Context, o *Order, e *Event, now time.Time) error {
	defer w.order(o)
	return w.SalesStore.CreateOrder(ctx, o, e, now)
}

func (w *stockWatch) CreateOrderWithKey(ctx context.Context, o *Order, e *Event, idem *Idempotency, now time.Time) error {
	defer w.order(o)
	return w.SalesStore.CreateOrderWithKey(ctx, o, e, idem, now)
}

func (w *stockWatch) ConfirmOrder(ctx context.Context, o *Order, ev *OrderEvent, now time.Time, overdueOK bool) error {
	defer w.order(o)
	return w.SalesStore.ConfirmOrder(ctx, o, ev, now, overdueOK)
}

func (w *stockWatch) CancelOrder(ctx context.Context, o *Order, ev *OrderEvent, now time.Time, overdueOnly bool) error {
	defer w.order(o)
	return w.SalesStore.CancelOrder(ctx, o, ev, now, overdueOnly)
}

func (w *stockWatch) ReinstateOrder(ctx context.Context, o *Order, e *Event, ev *OrderEvent, now time.Time, done []Timer) error {
	defer w.order(o)
	return w.SalesStore.ReinstateOrder(ctx, o, e, ev, now, done)
}

func (w *stockWatch) CompleteRefund(ctx context.Context, o *Order, ev *OrderEvent) error {
	defer w.order(o)
	return w.SalesStore.CompleteRefund(ctx, o, ev)
}
