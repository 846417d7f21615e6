package ticketing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// takenNumbers is an order store whose ticket numbers are always taken: every
// confirmation and reinstatement fails with ErrTicketNumberTaken, as if each
// draw hit a number already issued. After 50 tries it gives up with another
// error, so a retry loop that never ends still ends the test.
type takenNumbers struct {
	ticketing.OrderStore
	tries int
}

var errGaveUp = errors.New("takenNumbers: 50 tries")

func (s *takenNumbers) taken() error {
	s.tries++
	if s.tries >= 50 {
		return errGaveUp
	}
	return ticketing.ErrTicketNumberTaken
}

func (s *takenNumbers) ConfirmOrder(context.Context, *ticketing.Order, *ticketing.OrderEvent, time.Time, bool) error {
	return s.taken()
}

func (s *takenNumbers) ReinstateOrder(context.Context, *ticketing.Order, *ticketing.Event, *ticketing.OrderEvent, time.Time, []ticketing.Timer) error {
	return s.taken()
}

// withTakenNumbers rewires d's sales services over a store whose ticket
// numbers are always taken.
func (d *domain) withTakenNumbers() *takenNumbers {
	st := d.st.Sales()
	taken := &takenNumbers{OrderStore: st.OrderStore}
	st.OrderStore = taken
	d.sales = ticketing.NewSales(st, d.sales.Deps)
	return taken
}

// A confirmation whose ticket numbers are taken draws new ones: six tries
// in all (the first and five retries), then the error, the order unpaid.
func TestConfirm_DrawsTicketNumbersSixTimesThenFails(t *testing.T) {
	d := newDomain(t)
	o := d.order(t, "taken", gaOrder(1))
	taken := d.withTakenNumbers()
	_, err := d.sales.Orders.PaymentConfirmed(context.Background(), o)
	if !errors.Is(err, ticketing.ErrTicketNumberTaken) || taken.tries != 6 {
		t.Fatalf("confirm: %v after %d tries; want ErrTicketNumberTaken after 6", err, taken.tries)
	}
	if got := d.get(t, o.ID); got.Status != ticketing.OrderPending || d.paidEvents(o.ID) != 0 {
		t.Fatalf("order %s with %d order.paid, want pending and none", got.Status, d.paidEvents(o.ID))
	}
}

// Reinstating a late payment draws new ticket numbers the same six times,
// then reports the error (the notification is retried), the order cancelled.
func TestReinstate_DrawsTicketNumbersSixTimesThenFails(t *testing.T) {
	d, acq := liveDomain(t)
	o := d.order(t, "late-taken", gaOrder(1))
	d.clk.Set(o.ExpiresAt.Add(time.Second))
	if _, err := d.sales.Orders.Order(context.Background(), d.c.Tenant, o.ID); err != nil {
		t.Fatal(err)
	}
	acq.set(o.Payment.ID, ticketing.PaymentPaid)
	taken := d.withTakenNumbers()
	u := ticketing.PaymentUpdate{OrganizerID: o.OrganizerID, OrderID: o.ID, PaymentID: o.Payment.ID, Amount: o.TotalPrice, Status: ticketing.PaymentPaid}
	err := d.sales.Payments.ApplyPaymentUpdate(context.Background(), u)
	if !errors.Is(err, ticketing.ErrTicketNumberTaken) || taken.tries != 6 {
		t.Fatalf("late payment: %v after %d tries; want ErrTicketNumberTaken after 6", err, taken.tries)
	}
	if got := d.get(t, o.ID); got.Status != ticketing.OrderCancelled || got.LatePayment != nil || acq.refundCount() != 0 {
		t.Fatalf("order %s late %+v refunds %d: want cancelled, untouched, nothing refunded", got.Status, got.LatePayment, acq.refundCount())
	}
}
