package ticketing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// ApplyPaymentUpdate is what the acquirer itself answers about a payment (its
// state query: PaymentNotified's look, or reconciliation's), applied to its
// order; never what a notification claims.
// Every change is a conditional write from the state read, so an update that
// arrives twice, late or out of order changes nothing twice, and a stale one
// (a waiting state after paid) changes nothing. A nil error means the outcome
// is durably written: the notification may be acknowledged.
func (s *Payments) ApplyPaymentUpdate(ctx context.Context, u PaymentUpdate) error {
	for range 5 {
		o, err := s.OrderStore.GetOrder(ctx, u.OrderID)
		if isNotFound(err) {
			slog.WarnContext(ctx, "payment update for an unknown order", "order_id", u.OrderID, "payment_id", u.PaymentID)
			return nil
		}
		if err != nil {
			return err
		}
		if o.OrganizerID != u.OrganizerID || o.Environment != EnvLive {
			slog.WarnContext(ctx, "payment update from another organizer's terminal", "order_id", o.ID, "payment_id", u.PaymentID)
			return nil
		}
		err = s.applyUpdate(ctx, o, u)
		if !errors.Is(err, ErrStateChanged) {
			return err
		}
	}
	return fmt.Errorf("order %s kept changing while payment %s was applied", u.OrderID, u.PaymentID)
}

// applyUpdate applies u, the acquirer's own answer about one payment, to the
// order as read; ErrStateChanged asks for a fresh read and another go.
func (s *Payments) applyUpdate(ctx context.Context, o *Order, u PaymentUpdate) error {
	ours := o.Payment != nil && o.Payment.ID == u.PaymentID
	switch u.Status {
	case PaymentPaid:
		if o.Payment == nil && o.Status == OrderPending {
			// Its creation has not recorded the payment yet: this may be it.
			return fmt.Errorf("order %s has no payment recorded yet; payment %s is looked at again later", o.ID, u.PaymentID)
		}
		if !ours || u.Amount != o.TotalPrice {
			return s.refundStray(ctx, o, u)
		}
		return s.paid(ctx, o, u)
	case PaymentFailed:
		if ours && o.Status == OrderPending {
			return s.orders.cancel(ctx, o, "payment_failed", false)
		}
	case PaymentRefunded:
		switch {
		case !ours:
			return s.strayNotified(ctx, o, u.PaymentID)
		case o.Status == OrderPaid && o.Refund != nil && o.Refund.Status == RefundPending:
			return s.orders.completeRefund(ctx, o)
		case o.Status == OrderPaid && o.Refund == nil:
			return s.refundedOutside(ctx, o)
		case o.LatePayment != nil && o.LatePayment.Outcome == LateRefundPending:
			return s.lateRefunded(ctx, o)
		}
	case PaymentPartlyRefunded:
		if ours && o.Status == OrderPaid && o.Refund == nil && o.OutsideRefund == nil {
			return s.partlyRefundedOutside(ctx, o, u)
		}
	}
	return nil // nothing to do: already applied, stale, or a state in between
}

// paid applies the order's own payment confirmed for its amount.
func (s *Payments) paid(ctx context.Context, o *Order, u PaymentUpdate) error {
	switch o.Status {
	case OrderPending:
		_, err := s.orders.confirm(ctx, o, true)
		if errors.Is(err, ErrStateChanged) && o.Overdue(s.now()) {
			// Its seats went to someone else after it expired: end it,
			// and the next go treats the money as a late payment.
			if cerr := s.orders.cancel(ctx, o, "expired", true); cerr != nil && !errors.Is(cerr, ErrStateChanged) {
				return cerr
			}
		}
		return err
	case OrderCancelled:
		return s.latePayment(ctx, o, u)
	}
	return nil
}

// latePayment handles money confirmed for a cancelled order: the order is
// reinstated as paid when its stock can still be taken at once, else the
// money goes back (an automatic refund through the acquirer).
func (s *Payments) latePayment(ctx context.Context, o *Order, u PaymentUpdate) error {
	if lp := o.LatePayment; lp != nil {
		if lp.Outcome == LateRefundPending {
			return s.sendLateRefund(ctx, o) // again: the earlier request may not have reached the acquirer
		}
		return nil
	}
	if !s.stillPaid(ctx, o, u) {
		return nil // a stale notification: the payment was voided or refunded since
	}
	err := s.reinstate(ctx, o, u)
	var se *StockError
	if errors.As(err, &se) || isNotFound(err) {
		return s.startLateRefund(ctx, o, u)
	}
	return err
}

// stillPaid asks the acquirer whether the payment is still confirmed before a
// late payment is acted on, since notifications arrive out of order: a
// payment voided or refunded since must not be reinstated.
func (s *Payments) stillPaid(ctx context.Context, o *Order, u PaymentUpdate) bool {
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return true // cannot ask: act on what the verified notification says
	}
	st, ok := prov.(PaymentStater)
	if !ok {
		return true
	}
	cur, err := st.PaymentState(ctx, u.PaymentID)
	if err != nil {
		slog.WarnContext(ctx, "ask the acquirer about a late payment", "order_id", o.ID, "error", err)
		return true
	}
	return cur.Status == PaymentPaid
}

// reinstate moves the cancelled order to paid, taking its stock again.
func (s *Payments) reinstate(ctx context.Context, o *Order, u PaymentUpdate) error {
	e, err := s.Catalog.GetEvent(ctx, o.OrganizerID, o.EventID, o.Environment)
	if err != nil {
		return err
	}
	var done []Timer
	if t, ok := o.CheckTimer(); ok {
		done = append(done, t)
	}
	for attempt := 0; ; attempt++ {
		now := s.now()
		n := *o
		n.LatePayment = &LatePayment{PaymentID: u.PaymentID, Outcome: LateReinstated, DetectedAt: now,
			CancelledAt: o.CancelledAt, CancelReason: o.CancelReason}
		n.Status, n.PaidAt, n.CancelledAt, n.CancelReason, n.PaymentCheckAt = OrderPaid, &now, nil, "", nil
		n.TicketNumber, n.Tickets = issueTickets(o)
		n.Lines = append([]OrderLine(nil), o.Lines...) // a copy: o stays as read should this fail
		for i := range n.Lines {
			n.Lines[i].ReservationID, n.Lines[i].HoldID = "", "" // the holds ended with the order
		}
		ev := newEvent(EventOrderPaid, &n, now)
		err := s.OrderStore.ReinstateOrder(ctx, &n, e, ev, now, done)
		if errors.Is(err, ErrTicketNumberTaken) && attempt < 5 {
			continue
		}
		if err != nil {
			return err
		}
		slog.InfoContext(ctx, "late payment: order reinstated as paid", "order_id", o.ID, "payment_id", u.PaymentID)
		s.publish(ctx, ev)
		return nil
	}
}

// startLateRefund records that the late payment goes back, then asks the
// acquirer for it; a refund check follows it until it is settled. Recording
// first means a crash between the two is found by that check, which asks again.
func (s *Payments) startLateRefund(ctx context.Context, o *Order, u PaymentUpdate) error {
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return err
	}
	now := s.now()
	at := now.Add(s.Settings.RefundCheckEvery)
	_, asked := prov.(PaymentStater)
	if !asked {
		// A provider that cannot be asked (the test provider, which never
		// fails a refund) settles it on its own after the delay it names:
		// that is when the check is due, and finds it done.
		acc, err := prov.Refund(ctx, o.refundRequest(lateRefundID(o), u.PaymentID))
		if err != nil {
			return err
		}
		at = now.Add(acc.SettleAfter)
	}
	n := *o
	n.LatePayment = &LatePayment{PaymentID: u.PaymentID, Outcome: LateRefundPending, DetectedAt: now,
		CancelledAt: o.CancelledAt, CancelReason: o.CancelReason, CheckAt: &at}
	n.PaymentCheckAt = nil
	t, _ := n.CheckTimer()
	var done []Timer
	if old, ok := o.CheckTimer(); ok {
		done = append(done, old)
	}
	if err := s.OrderStore.SaveOrder(ctx, &n, OrderCancelled, []Timer{t}, done); err != nil {
		return err
	}
	slog.InfoContext(ctx, "late payment: stock gone, refunding", "order_id", o.ID, "payment_id", u.PaymentID)
	s.schedule(ctx, t.Kind, o.ID, t.Due)
	if !asked {
		return nil // sent above
	}
	return s.sendLateRefund(ctx, &n)
}

// sendLateRefund asks the acquirer to return a late payment (idempotent).
func (s *Payments) sendLateRefund(ctx context.Context, o *Order) error {
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return err
	}
	_, err = prov.Refund(ctx, o.refundRequest(lateRefundID(o), o.LatePayment.PaymentID))
	return err
}

// lateRefundID is the one refund id of an order's late payment.
func lateRefundID(o *Order) string { return "late_" + o.ID[len("ord_"):] }

// selfSettling reports whether the order's provider settles refunds on its
// own rather than being asked (it is no PaymentStater: the test provider).
func (s *Payments) selfSettling(ctx context.Context, o *Order) bool {
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return false
	}
	_, asked := prov.(PaymentStater)
	return !asked
}

// lateRefunded records that a late payment is back with the buyer.
func (s *Payments) lateRefunded(ctx context.Context, o *Order) error {
	now := s.now()
	n := *o
	lp := *o.LatePayment
	lp.Outcome, lp.RefundedAt, lp.CheckAt = LateRefunded, &now, nil
	n.LatePayment = &lp
	var done []Timer
	if t, ok := o.CheckTimer(); ok {
		done = append(done, t)
	}
	return s.OrderStore.SaveOrder(ctx, &n, OrderCancelled, nil, done)
}

// issueTickets draws the order's number and one ticket per unit.
func issueTickets(o *Order) (string, []Ticket) {
	used := map[string]bool{}
	fresh := func() string {
		for {
			if n := ticketNumber(); !used[n] {
				used[n] = true
				return n
			}
		}
	}
	number := fresh()
	var tickets []Ticket
	for _, l := range o.Lines {
		for range l.Quantity {
			tickets = append(tickets, Ticket{Number: fresh(), Status: TicketIssued, Seat: l.Seat})
		}
	}
	return number, tickets
}

// simulateLate is simulate-payment's late_payment for a cancelled test
// order: its payment confirmed after the fact, through the live path.
func (s *Payments) simulateLate(ctx context.Context, t Tenant, id string) (*Order, error) {
	o, err := s.orders.load(ctx, t, id)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Status != OrderCancelled || o.Payment == nil:
		return nil, Errorf(CodeConflict, "order %s is %s; only a cancelled order with a payment can receive a late payment", o.ID, o.Status)
	case o.LatePayment != nil:
		return o, nil // already received: simulating it again changes nothing
	}
	u := PaymentUpdate{OrganizerID: o.OrganizerID, OrderID: o.ID, PaymentID: o.Payment.ID, Amount: o.TotalPrice, Status: PaymentPaid}
	if err := s.latePayment(ctx, o, u); err != nil && !errors.Is(err, ErrStateChanged) {
		return nil, err
	}
	return s.orders.load(ctx, t, id)
}
