package ticketing

import (
	"context"
	"errors"
	"log/slog"
)

// Reconciliation: a live acquirer reports by notification, and notifications
// can be lost. So tix asks the acquirer itself (PaymentStater) at the points
// where a lost notification would cost: when a pending live order reaches its
// expiry, a grace period after a live order was cancelled (TimerPaymentCheck),
// and while a refund is under way (TimerRefundCheck, repeated until settled).
// Their markers make them survive lost timer messages like every other timer.

// stater is the acquirer of a live order that can be asked, or nil.
func (s *Payments) stater(ctx context.Context, o *Order) PaymentStater {
	if o.Environment != EnvLive || o.Payment == nil {
		return nil
	}
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		slog.WarnContext(ctx, "reconcile: no provider", "order_id", o.ID, "error", err)
		return nil
	}
	st, _ := prov.(PaymentStater)
	return st
}

// askAcquirer asks, at a pending live order's expiry, whether it was paid (or
// failed) and applies the answer; it reports whether the order moved on.
func (s *Payments) askAcquirer(ctx context.Context, o *Order) bool {
	st := s.stater(ctx, o)
	if st == nil {
		return false
	}
	u, err := st.PaymentState(ctx, o.Payment.ID)
	if err != nil {
		slog.WarnContext(ctx, "reconcile at expiry: ask the acquirer", "order_id", o.ID, "error", err)
		return false // expire it; the payment check after the grace period asks again
	}
	if u.Status != PaymentPaid && u.Status != PaymentFailed {
		return false
	}
	u.OrganizerID, u.OrderID = o.OrganizerID, o.ID
	if err := s.ApplyPaymentUpdate(ctx, u); err != nil {
		slog.WarnContext(ctx, "reconcile at expiry: apply", "order_id", o.ID, "error", err)
		return false
	}
	return true
}

// reconcile runs a payment or refund check: ask the acquirer, apply what it
// says, and check again later while the money is still on its way.
func (s *Payments) reconcile(ctx context.Context, o *Order, t Timer) error {
	due, owed := o.owedCheck(t.Kind)
	if !owed || due.Kind != t.Kind {
		return nil // done already
	}
	if s.now().Before(due.Due) {
		s.schedule(ctx, due.Kind, o.ID, due.Due) // early, or rescheduled since (its marker stays)
		return nil
	}
	if t.Kind == TimerRefundCheck && o.LatePayment != nil && s.selfSettling(ctx, o) {
		return s.lateRefunded(ctx, o) // its provider has settled it by now
	}
	st := s.stater(ctx, o)
	if st == nil {
		return errors.New("reconcile: the order's acquirer cannot be asked; will retry")
	}
	paymentID := o.Payment.ID
	if o.LatePayment != nil {
		paymentID = o.LatePayment.PaymentID
	}
	u, err := st.PaymentState(ctx, paymentID)
	if err != nil {
		return err // the timer is retried (queue redelivery, or the sweep finds its marker)
	}
	u.OrganizerID, u.OrderID = o.OrganizerID, o.ID
	if err := s.ApplyPaymentUpdate(ctx, u); err != nil {
		return err
	}
	return s.afterCheck(ctx, o.ID, t.Kind, u.Status)
}

// afterCheck decides, once the acquirer's answer is applied, whether the
// order still owes the check: a waiting payment of a cancelled order is
// voided, so it can no longer be paid; money still on its way back is
// asked for again after RefundCheckEvery (and a refund the acquirer never
// started is asked for again).
func (s *Payments) afterCheck(ctx context.Context, id, kind string, status PaymentStatus) error {
	o, err := s.orders.reload(ctx, id)
	if err != nil {
		return err
	}
	old, owed := o.owedCheck(kind)
	if !owed || old.Kind != kind {
		return nil // the update settled it
	}
	n := *o
	switch {
	case kind == TimerPaymentCheck && status == PaymentWaiting:
		return s.void(ctx, o) // the marker stays: the next check finds it cancelled at the acquirer
	case kind == TimerPaymentCheck:
		n.PaymentCheckAt = nil // failed or refunded: nothing can arrive any more
		return s.OrderStore.SaveOrder(ctx, &n, o.Status, nil, []Timer{old})
	}
	if status == PaymentPaid { // the refund request never took effect
		if err := s.resendRefund(ctx, o); err != nil {
			return err
		}
	}
	at := s.now().Add(s.Settings.RefundCheckEvery)
	if n.LatePayment != nil {
		lp := *n.LatePayment
		lp.CheckAt, n.LatePayment = &at, &lp
	} else {
		r := *n.Refund
		r.CheckAt, n.Refund = &at, &r
	}
	next := Timer{Kind: kind, OrderID: id, Due: at}
	if err := s.OrderStore.SaveOrder(ctx, &n, o.Status, []Timer{next}, []Timer{old}); err != nil {
		return err
	}
	s.schedule(ctx, kind, id, at)
	return nil
}

// void cancels the unpaid payment of a cancelled order at the acquirer, so
// that it can no longer be paid; its check runs again a grace period later.
func (s *Payments) void(ctx context.Context, o *Order) error {
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return err
	}
	if _, err := prov.Refund(ctx, o.refundRequest("void_"+o.ID[len("ord_"):], o.Payment.ID)); err != nil {
		return err
	}
	n := *o
	old, _ := o.CheckTimer()
	at := s.now().Add(s.Settings.PaymentCheckGrace)
	n.PaymentCheckAt = &at
	next, _ := n.CheckTimer()
	if err := s.OrderStore.SaveOrder(ctx, &n, OrderCancelled, []Timer{next}, []Timer{old}); err != nil {
		return err
	}
	s.schedule(ctx, next.Kind, o.ID, next.Due)
	return nil
}

// resendRefund asks the acquirer again for a refund it has not started.
func (s *Payments) resendRefund(ctx context.Context, o *Order) error {
	if o.LatePayment != nil {
		return s.sendLateRefund(ctx, o)
	}
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return err
	}
	_, err = prov.Refund(ctx, o.refundRequest(o.Refund.ID, o.Payment.ID))
	return err
}

// owedCheck is the reconciliation of kind the order still owes: its payment
// check or late refund check (CheckTimer), or the check of its own refund
// while that is pending.
func (o *Order) owedCheck(kind string) (Timer, bool) {
	if t, ok := o.CheckTimer(); ok {
		return t, t.Kind == kind
	}
	if kind == TimerRefundCheck && o.Status == OrderPaid && o.Refund != nil && o.Refund.Status == RefundPending {
		return o.SettleTimer()
	}
	return Timer{}, false
}
