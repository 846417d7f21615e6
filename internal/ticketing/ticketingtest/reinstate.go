package ticketingtest

import (
	"testing"
	"time"

	"tix/internal/ticketing"
)

// reinstated is the cancelled o as a payment that arrived at at makes it paid
// after all, with fresh ticket numbers; its lines keep their reservations.
func (f *fixture) reinstated(o *ticketing.Order, at time.Time) *ticketing.Order {
	n := *f.paidCopy(o)
	n.Lines = append([]ticketing.OrderLine(nil), o.Lines...)
	n.LatePayment = &ticketing.LatePayment{PaymentID: "pay_late", Outcome: ticketing.LateReinstated, DetectedAt: at,
		CancelledAt: o.CancelledAt, CancelReason: o.CancelReason}
	n.PaidAt, n.CancelledAt, n.CancelReason, n.PaymentCheckAt = &at, nil, "", nil
	return &n
}

// refund starts and completes a refund of the paid o.
func (f *fixture) refund(t *testing.T, o *ticketing.Order) {
	t.Helper()
	o.Refund = &ticketing.Refund{ID: f.id("rfd_c"), Status: ticketing.RefundPending, Amount: o.TotalPrice, Currency: "RUB", CreatedAt: f.now}
	must(t, "start a refund of "+o.ID, f.st.OrderStore.StartRefund(f.ctx, o))
	o.Status = ticketing.OrderRefunded
	must(t, "complete the refund of "+o.ID, f.st.OrderStore.CompleteRefund(f.ctx, o, f.outboxEvent(ticketing.EventOrderRefunded, o)))
}

func testReinstateGA(t *testing.T, f *fixture) {
	e := f.event(t)
	o := f.gaOrder(2)
	o.Promo = &ticketing.AppliedPromo{Code: Promo, Type: ticketing.PromoPercent, Value: 10, Discount: 30000, Limited: true}
	must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
	tm := f.cancelLive(t, o, o.ExpiresAt.Add(10*time.Minute))
	if n := f.sold(t); n != 0 {
		t.Fatalf("sold %d after the cancellation, want 0", n)
	}
	at := tm.Due.Add(-time.Minute)
	r := f.reinstated(o, at)
	ev := f.outboxEvent(ticketing.EventOrderPaid, r)
	must(t, "reinstate", f.st.OrderStore.ReinstateOrder(f.ctx, r, e, ev, at, []ticketing.Timer{tm, tm}))
	if r.Version != o.Version+1 {
		t.Fatalf("version after the reinstatement %d, want %d", r.Version, o.Version+1)
	}
	got := f.wantOrder(t, "reinstated", o.ID, ticketing.OrderPaid, r.Version)
	if len(got.Tickets) != 2 || got.LatePayment == nil || got.LatePayment.Outcome != ticketing.LateReinstated || got.CancelledAt != nil {
		t.Fatalf("reinstated order %+v", got)
	}
	if n := f.sold(t); n != 2 {
		t.Fatalf("sold %d after the reinstatement, want 2", n)
	}
	if n, _ := f.promoUses(e); n != 1 {
		t.Fatalf("promo uses %d after the reinstatement, want 1", n)
	}
	f.wantDue(t, "after the reinstatement", tm.Due.Add(time.Hour))
	f.wantEvent(t, "reinstated", ev, true)
	again := *r
	again.Version = o.Version
	wantIs(t, "reinstate twice", f.st.OrderStore.ReinstateOrder(f.ctx, &again, e, f.outboxEvent(ticketing.EventOrderPaid, &again), at, nil), ticketing.ErrStateChanged)
	if n := f.sold(t); n != 2 {
		t.Fatalf("sold %d after a second reinstatement, want 2", n)
	}
	other := f.gaOrder(1)
	must(t, "create another", f.st.OrderStore.CreateOrder(f.ctx, other, e, f.now))
	p := f.paidCopy(other)
	p.TicketNumber = r.Tickets[1].Number
	wantIs(t, "a reinstated order's ticket number", f.st.OrderStore.ConfirmOrder(f.ctx, p, f.outboxEvent(ticketing.EventOrderPaid, p), f.now, false), ticketing.ErrTicketNumberTaken)
	f.refund(t, r)
	if n := f.sold(t); n != 1 {
		t.Fatalf("sold %d after the refund, want 1 (the other order)", n)
	}
}

// wantCancelled checks that a refused reinstatement wrote nothing: the order
// cancelled at its version, its check still owed, no outbox event, sold as before.
func (f *fixture) wantCancelled(t *testing.T, what string, o *ticketing.Order, tm ticketing.Timer, ev *ticketing.OrderEvent, sold int) {
	t.Helper()
	f.wantOrder(t, what, o.ID, ticketing.OrderCancelled, o.Version)
	f.wantOwed(t, what, tm)
	f.wantEvent(t, what, ev, false)
	if n := f.sold(t); n != sold {
		t.Fatalf("%s: sold %d, want %d", what, n, sold)
	}
}

func testReinstateRefused(t *testing.T, f *fixture) {
	e := f.event(t)
	o := f.gaOrder(2)
	must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
	tm := f.cancelLive(t, o, o.ExpiresAt.Add(10*time.Minute))
	a, b := f.gaOrder(3), f.gaOrder(1)
	must(t, "take 3", f.st.OrderStore.CreateOrder(f.ctx, a, e, f.now))
	must(t, "take 1", f.st.OrderStore.CreateOrder(f.ctx, b, e, f.now))
	f.pay(t, b)
	at := o.ExpiresAt.Add(time.Minute)
	r := f.reinstated(o, at)
	ev := f.outboxEvent(ticketing.EventOrderPaid, r)
	done := []ticketing.Timer{tm}
	wantStock(t, "reinstate with one unit left", f.st.OrderStore.ReinstateOrder(f.ctx, r, e, ev, at, done), 0, false)
	f.wantCancelled(t, "refused for stock", o, tm, ev, 4)
	ac := *a
	ac.Status = ticketing.OrderCancelled
	must(t, "cancel the 3", f.st.OrderStore.CancelOrder(f.ctx, &ac, f.outboxEvent(ticketing.EventOrderCancelled, &ac), at, false))
	taken := *r
	taken.Tickets = append([]ticketing.Ticket(nil), r.Tickets...)
	taken.Tickets[1].Number = b.Tickets[0].Number
	wantIs(t, "reinstate with a taken ticket number", f.st.OrderStore.ReinstateOrder(f.ctx, &taken, e, ev, at, done), ticketing.ErrTicketNumberTaken)
	f.wantCancelled(t, "refused for a ticket number", o, tm, ev, 1)
	saved := *o
	next := tm.Due.Add(10 * time.Minute)
	saved.PaymentCheckAt = &next
	nt, _ := saved.CheckTimer()
	must(t, "reconciliation saves the order", f.st.OrderStore.SaveOrder(f.ctx, &saved, ticketing.OrderCancelled, []ticketing.Timer{nt}, done))
	wantIs(t, "reinstate from a stale version", f.st.OrderStore.ReinstateOrder(f.ctx, r, e, ev, at, []ticketing.Timer{nt}), ticketing.ErrStateChanged)
	f.wantCancelled(t, "refused from a stale version", &saved, nt, ev, 1)
	r.Version = saved.Version
	must(t, "reinstate the last 2 units", f.st.OrderStore.ReinstateOrder(f.ctx, r, e, ev, at, []ticketing.Timer{nt}))
	f.wantOrder(t, "reinstated", o.ID, ticketing.OrderPaid, saved.Version+1)
	f.wantEvent(t, "reinstated", ev, true)
	f.wantDue(t, "reinstated", next.Add(time.Hour))
	if n := f.sold(t); n != 3 {
		t.Fatalf("sold %d, want 3", n)
	}
}

func testReinstateSeats(t *testing.T, f *fixture) {
	e := f.event(t)
	h := f.hold("seat_1", "seat_2")
	must(t, "hold", f.st.HoldStore.CreateHold(f.ctx, h, nil, nil, f.now))
	o := f.seatOrder(h)
	must(t, "order the held seats", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
	tm := f.cancelLive(t, o, o.ExpiresAt.Add(10*time.Minute))
	late := o.ExpiresAt.Add(time.Minute)
	h2 := f.holdUntil(late.Add(5*time.Minute), "seat_2")
	must(t, "another hold of seat_2", f.st.HoldStore.CreateHold(f.ctx, h2, nil, nil, late))
	r := f.reinstated(o, late) // its lines still name the ended hold's reservations
	ev := f.outboxEvent(ticketing.EventOrderPaid, r)
	wantStock(t, "reinstate while another hold has seat_2", f.st.OrderStore.ReinstateOrder(f.ctx, r, e, ev, late, []ticketing.Timer{tm}), 1, true)
	f.wantCancelled(t, "refused for a held seat", o, tm, ev, 0)
	if s, ok := f.seat(t, "seat_1"); ok {
		t.Fatalf("a refused reinstatement took seat_1: %+v", s)
	}
	after := h2.ExpiresAt
	must(t, "reinstate once the other hold lapsed", f.st.OrderStore.ReinstateOrder(f.ctx, r, e, ev, after, []ticketing.Timer{tm}))
	f.wantOrder(t, "reinstated", o.ID, ticketing.OrderPaid, o.Version+1)
	for _, id := range []string{"seat_1", "seat_2"} {
		if s, _ := f.seat(t, id); s.Status != ticketing.SeatSold || !s.Taken(after.Add(1000*time.Hour)) {
			t.Fatalf("reinstated %s %+v, want sold", id, s)
		}
	}
	wantStock(t, "hold a reinstated seat", f.st.HoldStore.CreateHold(f.ctx, f.holdUntil(after.Add(time.Hour), "seat_2"), nil, nil, after), 0, true)
	f.refund(t, r)
	must(t, "hold the refunded seats", f.st.HoldStore.CreateHold(f.ctx, f.holdUntil(after.Add(time.Hour), "seat_1", "seat_2"), nil, nil, after))
}

func testReinstateSoldSeat(t *testing.T, f *fixture) {
	e := f.event(t)
	h := f.hold("seat_3")
	must(t, "hold", f.st.HoldStore.CreateHold(f.ctx, h, nil, nil, f.now))
	o := f.seatOrder(h)
	must(t, "order seat_3", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
	tm := f.cancelLive(t, o, o.ExpiresAt.Add(10*time.Minute))
	late := o.ExpiresAt.Add(time.Minute)
	h2 := f.holdUntil(late.Add(15*time.Minute), "seat_3")
	must(t, "another buyer holds seat_3", f.st.HoldStore.CreateHold(f.ctx, h2, nil, nil, late))
	p := f.seatOrder(h2)
	p.ExpiresAt = h2.ExpiresAt
	must(t, "and orders it", f.st.OrderStore.CreateOrder(f.ctx, p, e, late))
	paid := f.paidCopy(p)
	must(t, "and pays", f.st.OrderStore.ConfirmOrder(f.ctx, paid, f.outboxEvent(ticketing.EventOrderPaid, paid), late, false))
	r := f.reinstated(o, late)
	for i := range r.Lines {
		r.Lines[i].ReservationID, r.Lines[i].HoldID = "", ""
	}
	ev := f.outboxEvent(ticketing.EventOrderPaid, r)
	wantStock(t, "reinstate a seat another order bought", f.st.OrderStore.ReinstateOrder(f.ctx, r, e, ev, late.Add(time.Hour), []ticketing.Timer{tm}), 0, true)
	f.wantCancelled(t, "refused for a sold seat", o, tm, ev, 0)
	f.refund(t, paid)
	must(t, "reinstate once the buyer's refund freed it", f.st.OrderStore.ReinstateOrder(f.ctx, r, e, ev, late.Add(time.Hour), []ticketing.Timer{tm}))
	if s, _ := f.seat(t, "seat_3"); s.Status != ticketing.SeatSold {
		t.Fatalf("seat_3 %+v, want sold", s)
	}
}
