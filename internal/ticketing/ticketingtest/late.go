package ticketingtest

import (
	"testing"
	"time"

	"tix/internal/ticketing"
)

// Live payments: a confirmation that arrives after the expiry, the payment
// check a cancelled live order owes, and reconciliation's bookkeeping.

// paidCopy is o moved to paid with fresh ticket numbers, not yet written.
func (f *fixture) paidCopy(o *ticketing.Order) *ticketing.Order {
	n := *o
	paid := f.now
	n.Status, n.PaidAt, n.TicketNumber, n.Tickets = ticketing.OrderPaid, &paid, f.id("TIX-C"), nil
	for range o.Quantity {
		n.Tickets = append(n.Tickets, ticketing.Ticket{Number: f.id("TIX-C"), Status: ticketing.TicketIssued})
	}
	return &n
}

// holdUntil is a hold of the given seats live until until.
func (f *fixture) holdUntil(until time.Time, seats ...string) *ticketing.Hold {
	h := f.hold(seats...)
	h.ExpiresAt = until
	return h
}

// cancelLive cancels o at its expiry as a live order is cancelled: with a
// payment check owed at checkAt, whose timer it returns.
func (f *fixture) cancelLive(t *testing.T, o *ticketing.Order, checkAt time.Time) ticketing.Timer {
	t.Helper()
	c := *o
	at := o.ExpiresAt
	c.Status, c.CancelReason, c.CancelledAt, c.PaymentCheckAt = ticketing.OrderCancelled, "expired", &at, &checkAt
	must(t, "cancel "+o.ID, f.st.OrderStore.CancelOrder(f.ctx, &c, f.outboxEvent(ticketing.EventOrderCancelled, &c), at, true))
	*o = c
	tm, ok := c.CheckTimer()
	if !ok || tm.Kind != ticketing.TimerPaymentCheck || !tm.Due.Equal(checkAt) {
		t.Fatalf("check timer of a cancelled live order: %+v, %v", tm, ok)
	}
	return tm
}

// dueAt lists the timers due at at.
func (f *fixture) dueAt(t *testing.T, at time.Time) []ticketing.Timer {
	t.Helper()
	ts, err := f.st.Due.DueTimers(f.ctx, at, 50)
	must(t, "due timers", err)
	return ts
}

// wantDue checks that exactly the timers want are due at at.
func (f *fixture) wantDue(t *testing.T, what string, at time.Time, want ...ticketing.Timer) {
	t.Helper()
	got := f.dueAt(t, at)
	ok := len(got) == len(want)
	for _, w := range want {
		ok = ok && hasTimer(got, w)
	}
	if !ok {
		t.Fatalf("%s: due %+v, want %+v", what, got, want)
	}
}

// wantOwed checks that tm is due at its time (among others).
func (f *fixture) wantOwed(t *testing.T, what string, tm ticketing.Timer) {
	t.Helper()
	if got := f.dueAt(t, tm.Due); !hasTimer(got, tm) {
		t.Fatalf("%s: due %+v, want %+v among them", what, got, tm)
	}
}

func hasTimer(ts []ticketing.Timer, tm ticketing.Timer) bool {
	for _, g := range ts {
		if g.Kind == tm.Kind && g.OrderID == tm.OrderID && g.Due.Equal(tm.Due) {
			return true
		}
	}
	return false
}

// wantEvent checks whether the outbox holds ev (the order's id and type as written).
func (f *fixture) wantEvent(t *testing.T, what string, ev *ticketing.OrderEvent, present bool) {
	t.Helper()
	got, _, err := f.st.Outbox.GetOrderEvent(f.ctx, ev.ID)
	switch {
	case present && (err != nil || got.Type != ev.Type || got.Order.ID != ev.Order.ID):
		t.Fatalf("%s: outbox event %s: %+v, %v; want %s of %s", what, ev.ID, got, err, ev.Type, ev.Order.ID)
	case !present && err == nil:
		t.Fatalf("%s: outbox event %s written: %+v", what, ev.ID, got)
	}
}

// wantOrder checks an order's stored status and version.
func (f *fixture) wantOrder(t *testing.T, what, id string, status ticketing.OrderStatus, version int64) *ticketing.Order {
	t.Helper()
	got, err := f.st.OrderStore.GetOrder(f.ctx, id)
	if err != nil || got.Status != status || got.Version != version {
		t.Fatalf("%s: order %+v, %v; want %s at version %d", what, got, err, status, version)
	}
	return got
}

func testConfirmOverdue(t *testing.T, f *fixture) {
	e := f.event(t)
	o := f.gaOrder(1)
	must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
	late := o.ExpiresAt.Add(time.Minute)
	p := f.paidCopy(o)
	wantIs(t, "confirm overdue without the acquirer", f.st.OrderStore.ConfirmOrder(f.ctx, p, f.outboxEvent(ticketing.EventOrderPaid, p), late, false), ticketing.ErrStateChanged)
	ev := f.outboxEvent(ticketing.EventOrderPaid, p)
	must(t, "confirm overdue, the acquirer confirmed", f.st.OrderStore.ConfirmOrder(f.ctx, p, ev, late, true))
	f.wantOrder(t, "overdue order paid", o.ID, ticketing.OrderPaid, 2)
	f.wantEvent(t, "overdue order paid", ev, true)
	f.wantDue(t, "the expiry of an order paid overdue", late)
	c := f.gaOrder(1)
	must(t, "create another", f.st.OrderStore.CreateOrder(f.ctx, c, e, f.now))
	cc := *c
	cc.Status = ticketing.OrderCancelled
	must(t, "cancel it", f.st.OrderStore.CancelOrder(f.ctx, &cc, f.outboxEvent(ticketing.EventOrderCancelled, &cc), c.ExpiresAt, true))
	pc := f.paidCopy(c)
	pc.Version = cc.Version
	wantIs(t, "confirm a cancelled order", f.st.OrderStore.ConfirmOrder(f.ctx, pc, f.outboxEvent(ticketing.EventOrderPaid, pc), late, true), ticketing.ErrStateChanged)
	f.wantOrder(t, "a cancelled order confirmed", c.ID, ticketing.OrderCancelled, 2)
	if n := f.sold(t); n != 1 {
		t.Fatalf("sold %d, want 1 (the paid order only)", n)
	}
}

func testConfirmOverdueSeats(t *testing.T, f *fixture) {
	e := f.event(t)
	h := f.hold("seat_1")
	must(t, "hold seat_1", f.st.HoldStore.CreateHold(f.ctx, h, nil, nil, f.now))
	o := f.seatOrder(h)
	must(t, "order seat_1", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
	late := o.ExpiresAt.Add(time.Minute)
	h2 := f.holdUntil(late.Add(15*time.Minute), "seat_1")
	must(t, "hold seat_1 once the order is overdue", f.st.HoldStore.CreateHold(f.ctx, h2, nil, nil, late))
	p := f.paidCopy(o)
	wantIs(t, "confirm overdue when another hold has the seat", f.st.OrderStore.ConfirmOrder(f.ctx, p, f.outboxEvent(ticketing.EventOrderPaid, p), late, true), ticketing.ErrStateChanged)
	f.wantOrder(t, "an order whose seat went", o.ID, ticketing.OrderPending, 1)
	if s, _ := f.seat(t, "seat_1"); s.Status != ticketing.SeatHeld || s.HoldID != h2.ID {
		t.Fatalf("seat_1 %+v, want held by %s", s, h2.ID)
	}
	h3 := f.hold("seat_2")
	must(t, "hold seat_2", f.st.HoldStore.CreateHold(f.ctx, h3, nil, nil, f.now))
	o3 := f.seatOrder(h3)
	must(t, "order seat_2", f.st.OrderStore.CreateOrder(f.ctx, o3, e, f.now))
	p3 := f.paidCopy(o3)
	must(t, "confirm overdue, the seat still the order's", f.st.OrderStore.ConfirmOrder(f.ctx, p3, f.outboxEvent(ticketing.EventOrderPaid, p3), late, true))
	if s, _ := f.seat(t, "seat_2"); s.Status != ticketing.SeatSold {
		t.Fatalf("seat_2 %+v, want sold", s)
	}
	wantStock(t, "hold a seat paid overdue", f.st.HoldStore.CreateHold(f.ctx, f.holdUntil(late.Add(time.Hour), "seat_2"), nil, nil, late), 0, true)
}

func testCheckMarkers(t *testing.T, f *fixture) {
	e := f.event(t)
	o := f.gaOrder(1)
	must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
	check := o.ExpiresAt.Add(10 * time.Minute)
	tm := f.cancelLive(t, o, check)
	plain := f.gaOrder(1)
	must(t, "create another", f.st.OrderStore.CreateOrder(f.ctx, plain, e, f.now))
	pc := *plain
	pc.Status = ticketing.OrderCancelled
	must(t, "cancel it without a check", f.st.OrderStore.CancelOrder(f.ctx, &pc, f.outboxEvent(ticketing.EventOrderCancelled, &pc), f.now, false))
	f.wantDue(t, "before the check", check.Add(-time.Second))
	f.wantDue(t, "at the check", check, tm)
	stale := *o
	next := check.Add(10 * time.Minute)
	n := *o
	n.PaymentCheckAt = &next
	nt, _ := n.CheckTimer()
	wrong := n
	wrong.Status = ticketing.OrderPending
	wantIs(t, "save a cancelled order as pending", f.st.OrderStore.SaveOrder(f.ctx, &wrong, ticketing.OrderPending, []ticketing.Timer{nt}, []ticketing.Timer{tm}), ticketing.ErrStateChanged)
	f.wantDue(t, "after a refused save", next, tm)
	must(t, "save", f.st.OrderStore.SaveOrder(f.ctx, &n, ticketing.OrderCancelled, []ticketing.Timer{nt}, []ticketing.Timer{tm}))
	if n.Version != o.Version+1 {
		t.Fatalf("version after the save %d, want %d", n.Version, o.Version+1)
	}
	if got := f.wantOrder(t, "saved", o.ID, ticketing.OrderCancelled, n.Version); got.PaymentCheckAt == nil || !got.PaymentCheckAt.Equal(next) {
		t.Fatalf("saved check at %v, want %v", got.PaymentCheckAt, next)
	}
	f.wantDue(t, "after the save", next, nt)
	wantIs(t, "save from a stale version", f.st.OrderStore.SaveOrder(f.ctx, &stale, ticketing.OrderCancelled, []ticketing.Timer{tm}, []ticketing.Timer{nt}), ticketing.ErrStateChanged)
	f.wantDue(t, "after a stale save", next, nt)
	changed := n
	changed.Status = ticketing.OrderPaid
	if err := f.st.OrderStore.SaveOrder(f.ctx, &changed, ticketing.OrderCancelled, nil, []ticketing.Timer{nt}); err == nil {
		t.Fatal("a save changed the order's status")
	}
	f.wantOrder(t, "after a save that would change the status", o.ID, ticketing.OrderCancelled, n.Version)
	f.wantDue(t, "after a save that would change the status", next, nt)
	must(t, "save with a marker both put and done", f.st.OrderStore.SaveOrder(f.ctx, &n, ticketing.OrderCancelled, []ticketing.Timer{nt}, []ticketing.Timer{nt, nt}))
	f.wantDue(t, "a marker both put and done is written", next, nt)
	done := n
	done.PaymentCheckAt = nil
	must(t, "save the check done", f.st.OrderStore.SaveOrder(f.ctx, &done, ticketing.OrderCancelled, nil, []ticketing.Timer{nt}))
	f.wantDue(t, "after the check is done", next.Add(time.Hour))
}
