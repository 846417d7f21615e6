package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// A live order cancelled before its expiry (its payment failed, say) whose
// seat release after the cancellation never happened still reserves its seat
// until the expiry. When its payment arrives after all, that seat is the
// order's own: the reinstatement takes it, while another order's live
// reservation still refuses it.
func TestReinstateTakesTheOrdersOwnStaleReservation(t *testing.T) {
	ctx := context.Background()
	r := newLateRace(t)
	o := r.order(1, "seat_1")
	if err := r.st.Orders.CreateOrder(ctx, o, r.e, r.now); err != nil {
		t.Fatal(err)
	}
	other := r.order(1, "seat_2")
	if err := r.st.Orders.CreateOrder(ctx, other, r.e, r.now); err != nil {
		t.Fatal(err)
	}
	o.Status, o.CancelReason = ticketing.OrderCancelled, "payment_failed"
	if err := r.st.Orders.CancelOrder(ctx, o, r.event(ticketing.EventOrderCancelled, o), r.now, false); err != nil {
		t.Fatal(err)
	}
	if err := r.st.PutStaleReservation(ctx, o, 0); err != nil {
		t.Fatal(err)
	}
	at := r.now.Add(time.Minute) // before the expiry: the reservation is live
	reinstate := func(seat string) error {
		n := *o
		n.Lines = []ticketing.OrderLine{o.Lines[0]}
		n.Lines[0].Seat = &ticketing.SeatRef{SeatID: seat, Label: seat, ZoneName: "Stalls"}
		n.Status, n.PaidAt, n.CancelReason = ticketing.OrderPaid, &at, ""
		n.TicketNumber, n.Tickets = r.id("TIX-R"), []ticketing.Ticket{{Number: r.id("TIX-R"), Status: ticketing.TicketIssued}}
		err := r.st.Orders.ReinstateOrder(ctx, &n, r.e, r.event(ticketing.EventOrderPaid, &n), at, nil)
		if err == nil {
			*o = n
		}
		return err
	}
	var se *ticketing.StockError
	if err := reinstate("seat_2"); !errors.As(err, &se) || !se.Seat {
		t.Fatalf("reinstate onto another order's live reservation: %v, want a seat stock error", err)
	}
	if err := reinstate("seat_1"); err != nil {
		t.Fatalf("reinstate onto the order's own stale reservation: %v", err)
	}
	st, err := r.st.Catalog.GetStock(ctx, o.EventID, o.Environment, "")
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Seats[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: "seat_1"}]; s.Status != ticketing.SeatSold {
		t.Fatalf("seat_1 %+v, want sold", s)
	}
}
