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
// A new HoldStore or OrderStore method that moves stock must be added here.
func (rc *ReadCache) Watch(st SalesStores) SalesStores {
	if rc == nil {
		return st
	}
	st.HoldStore = &holdWatch{HoldStore: st.HoldStore, views: rc}
	st.OrderStore = &orderWatch{OrderStore: st.OrderStore, views: rc}
	return st
}

type holdWatch struct {
	HoldStore
	views *ReadCache
}

type orderWatch struct {
	OrderStore
	views *ReadCache
}

func (w *orderWatch) order(o *Order) {
	w.views.Invalidate(Tenant{OrganizerID: o.OrganizerID, Environment: o.Environment}, o.EventID)
}

func (w *holdWatch) hold(h *Hold) {
	w.views.Invalidate(Tenant{OrganizerID: h.OrganizerID, Environment: h.Environment}, h.EventID)
}

func (w *holdWatch) CreateHold(ctx context.Context, h *Hold, idem *Idempotency, ip *HoldIPUpdate, now time.Time) error {
	defer w.hold(h)
	return w.HoldStore.CreateHold(ctx, h, idem, ip, now)
}

func (w *holdWatch) ReleaseSeat(ctx context.Context, h *Hold, s HoldSeat, now time.Time) (bool, error) {
	defer w.hold(h)
	return w.HoldStore.ReleaseSeat(ctx, h, s, now)
}

func (w *orderWatch) CreateOrder(ctx context.Context, o *Order, e *Event, now time.Time) error {
	defer w.order(o)
	return w.OrderStore.CreateOrder(ctx, o, e, now)
}

func (w *orderWatch) CreateOrderWithKey(ctx context.Context, o *Order, e *Event, idem *Idempotency, now time.Time) error {
	defer w.order(o)
	return w.OrderStore.CreateOrderWithKey(ctx, o, e, idem, now)
}

func (w *orderWatch) ConfirmOrder(ctx context.Context, o *Order, ev *OrderEvent, now time.Time, overdueOK bool) error {
	defer w.order(o)
	return w.OrderStore.ConfirmOrder(ctx, o, ev, now, overdueOK)
}

func (w *orderWatch) CancelOrder(ctx context.Context, o *Order, ev *OrderEvent, now time.Time, overdueOnly bool) error {
	defer w.order(o)
	return w.OrderStore.CancelOrder(ctx, o, ev, now, overdueOnly)
}

func (w *orderWatch) ReinstateOrder(ctx context.Context, o *Order, e *Event, ev *OrderEvent, now time.Time, done []Timer) error {
	defer w.order(o)
	return w.OrderStore.ReinstateOrder(ctx, o, e, ev, now, done)
}

func (w *orderWatch) CompleteRefund(ctx context.Context, o *Order, ev *OrderEvent) error {
	defer w.order(o)
	return w.OrderStore.CompleteRefund(ctx, o, ev)
}
