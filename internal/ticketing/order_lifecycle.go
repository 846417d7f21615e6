package ticketing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"unicode/utf8"
)

// current applies what is overdue to an order read from storage: a pending
// order past its expiry is cancelled (stock returned) and a refund whose
// provider settles on its own is completed, whichever process gets there first.
// Every change is a conditional write from the expected state, so it happens once.
// A live order's acquirer is asked first whether it was paid by its deadline,
// in case the notification is late or lost.
func (s *Orders) current(ctx context.Context, o *Order) (*Order, error) {
	now := s.now()
	if lp := o.LatePayment; lp != nil && lp.Outcome == LateRefundPending && lp.CheckAt != nil &&
		!now.Before(*lp.CheckAt) && s.payments.selfSettling(ctx, o) {
		if err := s.payments.lateRefunded(ctx, o); err != nil && !errors.Is(err, ErrStateChanged) {
			return nil, err
		}
		return s.reload(ctx, o.ID)
	}
	if o.Overdue(now) {
		if s.payments.askAcquirer(ctx, o) {
			return s.reload(ctx, o.ID)
		}
		if err := s.cancel(ctx, o, "expired", true); err != nil && !errors.Is(err, ErrStateChanged) {
			return nil, err
		}
		return s.reload(ctx, o.ID)
	}
	if o.Status == OrderPaid && o.Refund != nil && o.Refund.Status == RefundPending &&
		o.Refund.SettleAt != nil && !now.Before(*o.Refund.SettleAt) {
		if err := s.completeRefund(ctx, o); err != nil && !errors.Is(err, ErrStateChanged) {
			return nil, err
		}
		return s.reload(ctx, o.ID)
	}
	return o, nil
}

// cancel moves a pending order to cancelled and returns its stock.
func (s *Orders) cancel(ctx context.Context, o *Order, reason string, overdueOnly bool) error {
	now := s.now()
	n := *o
	n.Status, n.CancelledAt, n.CancelReason = OrderCancelled, &now, reason
	if n.Environment == EnvLive && n.Payment != nil {
		// A live payment can still be confirmed after the order ended (the
		// buyer's bank was slow, a notification was lost): ask again later.
		at := now.Add(s.Settings.PaymentCheckGrace)
		n.PaymentCheckAt = &at
	}
	ev := newEvent(EventOrderCancelled, &n, now)
	if err := s.OrderStore.CancelOrder(ctx, &n, ev, now, overdueOnly); err != nil {
		return err
	}
	s.publish(ctx, ev)
	return nil
}

// ticketAlphabet has no 0/O or 1/I/L: a ticket number is read aloud at the door.
const ticketAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

func ticketNumber() string { return "TIX-" + randomString(ticketAlphabet, 6) }

// PaymentConfirmed is the one confirmation path: the acquirer's notification
// or state (live) and simulate-payment (test) both end here. A pending order
// that is not overdue becomes paid and gets its tickets; anything else is
// ErrStateChanged.
func (s *Orders) PaymentConfirmed(ctx context.Context, o *Order) (*Order, error) {
	return s.confirm(ctx, o, false)
}

// confirm pays a pending order; overdueOK when the acquirer confirmed the
// money, which it takes only before the payment's deadline, the order's expiry.
func (s *Orders) confirm(ctx context.Context, o *Order, overdueOK bool) (*Order, error) {
	now := s.now()
	if o.Status != OrderPending || (o.Overdue(now) && !overdueOK) || o.Payment == nil {
		return nil, ErrStateChanged
	}
	for attempt := 0; ; attempt++ {
		n := *o
		n.Status, n.PaidAt = OrderPaid, &now
		n.TicketNumber, n.Tickets = issueTickets(o)
		ev := newEvent(EventOrderPaid, &n, now)
		err := s.OrderStore.ConfirmOrder(ctx, &n, ev, now, overdueOK)
		if errors.Is(err, ErrTicketNumberTaken) && attempt < 5 {
			continue
		}
		if err != nil {
			return nil, err
		}
		s.publish(ctx, ev)
		return &n, nil
	}
}

// Simulation outcomes.
const (
	OutcomePaid      = "paid"
	OutcomeCancelled = "cancelled"
	// OutcomeLatePayment pays a cancelled test order after the fact, as a
	// live payment confirmed after expiry: reinstated, or refunded.
	OutcomeLatePayment = "late_payment"
)

// Simulate is POST /orders/{id}/simulate-payment for test orders.
func (s *Orders) Simulate(ctx context.Context, t Tenant, id, outcome string) (*Order, error) {
	if t.Environment != EnvTest {
		return nil, &Error{Code: CodeUnsupported, Message: "simulate-payment works only for test orders with an sk_test key"}
	}
	if outcome == "" {
		outcome = OutcomePaid
	}
	if outcome != OutcomePaid && outcome != OutcomeCancelled && outcome != OutcomeLatePayment {
		return nil, Invalid("outcome", "outcome must be paid, cancelled or late_payment")
	}
	if outcome == OutcomeLatePayment {
		return s.payments.simulateLate(ctx, t, id)
	}
	for range 3 {
		o, err := s.load(ctx, t, id)
		if err != nil {
			return nil, err
		}
		if o.Environment != EnvTest {
			return nil, &Error{Code: CodeUnsupported, Message: "simulate-payment works only for test orders"}
		}
		switch {
		case o.Status == OrderPending && outcome == OutcomePaid:
			n, err := s.PaymentConfirmed(ctx, o)
			if errors.Is(err, ErrStateChanged) {
				continue // expired or settled meanwhile: answer from the new state
			}
			return n, err
		case o.Status == OrderPending:
			err := s.cancel(ctx, o, "payment_cancelled", false)
			if errors.Is(err, ErrStateChanged) {
				continue
			}
			if err != nil {
				return nil, err
			}
			return s.reload(ctx, id)
		case string(o.Status) == outcome:
			return o, nil // already there: simulating it again changes nothing
		default:
			return nil, &Error{Code: CodeConflict, Message: fmt.Sprintf("order %s is %s; it cannot become %s", o.ID, o.Status, outcome)}
		}
	}
	return nil, Errorf(CodeConflict, "order %s changed concurrently; retry", id)
}

// Tickets is GET /orders/{id}/tickets: only for a paid order.
func (s *Orders) Tickets(ctx context.Context, t Tenant, id string) (*Order, error) {
	o, err := s.load(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if o.Status != OrderPaid {
		return nil, Errorf(CodeConflict, "tickets exist only for a paid order; order %s is %s", o.ID, o.Status)
	}
	return s.withDoorState(ctx, o)
}

// withDoorState marks the order's admitted tickets used and its
// transferred ones transferred.
func (s *Orders) withDoorState(ctx context.Context, o *Order) (*Order, error) {
	states, err := doorStates(ctx, s.Door, o)
	if err != nil || states == nil {
		return o, err
	}
	n := *o
	n.Tickets = slices.Clone(o.Tickets)
	for i, tk := range n.Tickets {
		switch st := states[tk.Number]; {
		case tk.Status != TicketIssued:
		case st.CheckIn != nil:
			n.Tickets[i].Status = TicketUsed
		case st.TransferredTo != "":
			n.Tickets[i].Status = TicketTransferred
		}
	}
	return &n, nil
}

// doorStates reads the door state of o's tickets (nil without a door).
func doorStates(ctx context.Context, door TicketStore, o *Order) (map[string]TicketState, error) {
	if door == nil || len(o.Tickets) == 0 {
		return nil, nil
	}
	numbers := make([]string, len(o.Tickets))
	for i, tk := range o.Tickets {
		numbers[i] = tk.Number
	}
	return door.DoorStates(ctx, o.Environment, numbers)
}

// doorRefusal is the 409 of an order whose ticket was admitted, has a
// transfer pending or was transferred (contract section 4, rule 7).
func (s *Orders) doorRefusal(ctx context.Context, o *Order) error {
	states, err := doorStates(ctx, s.Door, o)
	if err != nil {
		return err
	}
	for _, tk := range o.Tickets {
		st := states[tk.Number]
		st.RefundID = "" // a lock of this order's own refund is not a refusal
		if err := lockedError(st, "refunded"); err != nil {
			return err
		}
	}
	return nil
}

// refundID is the one refund id of an order: v1 refunds are always 100%, once,
// so deriving it makes the provider call idempotent however many callers race.
func refundID(orderID string) string { return "rfd_" + orderID[len("ord_"):] }

// RefundOrder is POST /orders/{id}/refund (contract section 4 rule 7).
func (s *Orders) RefundOrder(ctx context.Context, t Tenant, id string, reason *string) (*Refund, error) {
	if reason != nil && utf8.RuneCountInString(*reason) > MaxRefundReason {
		return nil, Invalid("reason", "reason is longer than %d characters", MaxRefundReason)
	}
	o, err := s.load(ctx, t, id)
	if err != nil {
		return nil, err
	}
	switch o.Status {
	case OrderRefunded:
		return o.Refund, nil // idempotent: echo the completed refund
	case OrderPaid:
	default:
		return nil, Errorf(CodeConflict, "only a paid order can be refunded; order %s is %s", o.ID, o.Status)
	}
	if o.Refund != nil {
		return nil, Errorf(CodeConflict, "a refund of order %s is in progress", o.ID)
	}
	if o.OutsideRefund != nil {
		return nil, Errorf(CodeConflict, "part of order %s's money was already returned at the bank, outside tix; the organizer settles the rest with the buyer", o.ID)
	}
	for _, tk := range o.Tickets {
		if tk.Status != TicketIssued {
			return nil, Errorf(CodeConflict, "ticket %s was %s; the order cannot be refunded", tk.Number, tk.Status)
		}
	}
	if err := s.doorRefusal(ctx, o); err != nil {
		return nil, err
	}
	if err := refundUnsupported(o); err != nil {
		return nil, err
	}
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return nil, &Error{Code: CodePaymentProviderError, Message: "the SBP provider is not available; retry later", Err: err}
	}
	if err := s.lockTickets(ctx, o); err != nil {
		return nil, err
	}
	now := s.now()
	r := &Refund{ID: refundID(o.ID), Status: RefundPending, Amount: o.TotalPrice, Currency: o.Currency, Reason: reason, CreatedAt: now}
	acc, err := prov.Refund(ctx, o.refundRequest(r.ID, o.Payment.ID))
	if err != nil {
		if s.Door != nil {
			// even when the request was cancelled: the lock must not outlive the refusal
			if uerr := s.Door.UnlockRefund(context.WithoutCancel(ctx), o, r.ID); uerr != nil {
				slog.WarnContext(ctx, "unlock tickets after a refused refund", "order", o.ID, "error", uerr)
			}
		}
		return nil, &Error{Code: CodePaymentProviderError, Message: "the SBP provider refused the refund; retry later", Err: err}
	}
	if acc.SettleAfter > 0 {
		at := now.Add(acc.SettleAfter)
		r.SettleAt = &at
	} else {
		// The acquirer reports settlement; reconciliation asks in case that is lost.
		at := now.Add(s.Settings.RefundCheckEvery)
		r.CheckAt = &at
	}
	n := *o
	n.Refund = r
	if err := s.OrderStore.StartRefund(ctx, &n); err != nil {
		if errors.Is(err, ErrStateChanged) {
			return nil, Errorf(CodeConflict, "a refund of order %s is in progress", o.ID)
		}
		return nil, err
	}
	if t, ok := n.SettleTimer(); ok {
		s.schedule(ctx, t.Kind, o.ID, t.Due)
	}
	return r, nil
}

// refundUnsupported is the 422 of an order the API cannot refund: not a
// ticket order, transferred in, free, or not paid by SBP.
func refundUnsupported(o *Order) error {
	if o.Type != OrderTypeTicket {
		return Errorf(CodeUnsupported, "only ticket orders can be refunded through the API")
	}
	if from := o.TransferredFrom; from != nil {
		return Errorf(CodeUnsupported, "order %s holds ticket %s transferred from order %s: its payment is transferred-in and carries no money to refund (the money stays with order %s)",
			o.ID, o.Tickets[0].Number, from.OrderID, from.OrderID)
	}
	if o.TotalPrice == 0 {
		return Errorf(CodeUnsupported, "a free order cannot be refunded")
	}
	if o.Payment == nil || o.Payment.Provider != "sbp" {
		return Errorf(CodeUnsupported, "only orders paid by SBP can be refunded through the API")
	}
	return nil
}

// lockTickets locks the order's tickets for its refund, in one
// transaction that fails when a ticket was admitted: a door and a refund
// exclude each other on the ticket's item (docs/door.md).
func (s *Orders) lockTickets(ctx context.Context, o *Order) error {
	if s.Door == nil {
		return nil
	}
	err := s.Door.LockForRefund(ctx, o, refundID(o.ID))
	if errors.Is(err, ErrTicketAdmitted) {
		if derr := s.doorRefusal(ctx, o); derr != nil {
			return derr
		}
		return Errorf(CodeConflict, "a ticket of order %s was admitted at the door, transferred, or has a transfer pending; the order cannot be refunded", o.ID)
	}
	return err
}

// LatestRefund is GET /orders/{id}/refund.
func (s *Orders) LatestRefund(ctx context.Context, t Tenant, id string) (*Refund, error) {
	o, err := s.load(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if o.Refund == nil {
		return nil, NotFound("refund of order " + id)
	}
	return o.Refund, nil
}

// RefundSettled is the provider telling us the money is back with the buyer.
func (s *Orders) completeRefund(ctx context.Context, o *Order) error {
	now := s.now()
	n := *o
	r := *o.Refund
	r.Status, r.CompletedAt = RefundCompleted, &now
	n.Status, n.Refund = OrderRefunded, &r
	n.Tickets = make([]Ticket, len(o.Tickets))
	for i, tk := range o.Tickets {
		tk.Status = TicketRefunded
		n.Tickets[i] = tk
	}
	ev := newEvent(EventOrderRefunded, &n, now)
	if err := s.OrderStore.CompleteRefund(ctx, &n, ev); err != nil {
		return err
	}
	s.publish(ctx, ev)
	return nil
}

// SweepDue does the work of up to limit timers that are still owed a
// SweepGrace after they were due (their message was lost, or the process died
// before sending it): pending orders past their expiry are expired, refunds
// past their settlement are completed. A read would do it too, but until then
// stock stays taken. A timer due more recently is left to the timers queue,
// whose message may be about to be consumed, so every timer the sweep handles
// is lost work. It returns how many it handled.
func (s *Orders) SweepDue(ctx context.Context, limit int) (int, error) {
	timers, err := s.Due.DueTimers(ctx, s.now().Add(-s.Settings.SweepGrace), limit)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, t := range timers {
		if err := s.HandleTimer(ctx, t); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", t.Kind, t.OrderID, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// HandleTimer does the delayed work of the timers queue. Work that is already
// done (or undone) is skipped, so a timer delivered twice changes nothing.
func (s *Orders) HandleTimer(ctx context.Context, t Timer) error {
	o, err := s.OrderStore.GetOrder(ctx, t.OrderID)
	if isNotFound(err) {
		return nil // nothing left to do
	}
	if err != nil {
		return err
	}
	now := s.now()
	switch t.Kind {
	case TimerOrderExpiry:
		if o.Status == OrderPending && now.Before(o.ExpiresAt) {
			return s.Timers.Schedule(ctx, Timer{Kind: t.Kind, OrderID: o.ID, Due: o.ExpiresAt}) // a little early
		}
		_, err = s.current(ctx, o) // asks a live order's acquirer first
		return err
	case TimerPaymentCheck, TimerRefundCheck:
		return s.payments.reconcile(ctx, o, t)
	case TimerStrayCheck:
		return s.payments.checkStrays(ctx, o)
	case TimerRefundSettle:
		if r := o.Refund; o.Status == OrderPaid && r != nil && r.SettleAt != nil && now.Before(*r.SettleAt) {
			return s.Timers.Schedule(ctx, Timer{Kind: t.Kind, OrderID: o.ID, Due: *r.SettleAt})
		}
		_, err = s.current(ctx, o)
		return err
	}
	return fmt.Errorf("unknown timer kind %q", t.Kind)
}

// refundRequest asks for the whole of payment paymentID back, with the
// receipt of what is returned.
func (o *Order) refundRequest(refundID, paymentID string) RefundRequest {
	return RefundRequest{OrderID: o.ID, RefundID: refundID, PaymentID: paymentID, Environment: o.Environment,
		Amount: o.TotalPrice, Currency: o.Currency, Email: o.Buyer.Email, Items: o.ReceiptItems()}
}
