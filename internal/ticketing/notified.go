package ticketing

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// OwnerAlerts tells an organizer's owners of what needs them.
type OwnerAlerts interface {
	// PartlyRefundedOutside: part of a paid order's money was returned at the
	// acquirer, outside tix; the order stays paid and is flagged. Raising it
	// again for the same order sends nothing more.
	PartlyRefundedOutside(ctx context.Context, organizerID, orderID, paymentID string, at time.Time) error
}

// PaymentNotified acts on a verified notification from the acquirer as a
// hint only: n names a payment of an order, and nothing else in it is
// believed. The acquirer is asked for that payment's state (PaymentStater),
// and its answer, against the order's own amounts, is applied
// (ApplyPaymentUpdate). A nil error means there is nothing left to do for
// this notification: it may be acknowledged.
func (s *Payments) PaymentNotified(ctx context.Context, n PaymentUpdate) error {
	o, err := s.OrderStore.GetOrder(ctx, n.OrderID)
	if isNotFound(err) {
		slog.WarnContext(ctx, "payment notification for an unknown order", "order_id", n.OrderID, "payment_id", n.PaymentID)
		return nil
	}
	if err != nil {
		return err
	}
	if o.OrganizerID != n.OrganizerID || o.Environment != EnvLive {
		slog.WarnContext(ctx, "payment notification from another organizer's terminal", "order_id", o.ID, "payment_id", n.PaymentID)
		return nil
	}
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return err
	}
	st, ok := prov.(PaymentStater)
	if !ok {
		return errors.New("payment notification: the order's acquirer cannot be asked")
	}
	u, err := st.PaymentState(ctx, n.PaymentID)
	if errors.Is(err, ErrUnknownPayment) {
		slog.WarnContext(ctx, "payment notification names a payment the acquirer does not know", "order_id", o.ID, "payment_id", n.PaymentID, "error", err)
		return nil
	}
	if err != nil {
		return err // unanswered: the bank sends the notification again
	}
	if u.OrderID != o.ID {
		slog.WarnContext(ctx, "payment notification: the acquirer files the payment under another order", "order_id", o.ID, "payment_id", n.PaymentID, "acquirer_order_id", u.OrderID)
		return nil
	}
	u.OrganizerID = o.OrganizerID
	return s.ApplyPaymentUpdate(ctx, u)
}

// outsideRefundReason is the reason of a refund made at the acquirer.
const outsideRefundReason = "refunded at the acquirer, outside tix"

// refundedOutside follows a full refund made at the acquirer for a paid
// order with no refund of tix under way: the order is refunded (tickets
// refunded, stock back, order.refunded) as if tix had asked for it.
func (s *Payments) refundedOutside(ctx context.Context, o *Order) error {
	now := s.now()
	reason := outsideRefundReason
	n := *o
	n.Refund = &Refund{ID: refundID(o.ID), Status: RefundPending, Amount: o.TotalPrice, Currency: o.Currency,
		Reason: &reason, CreatedAt: now}
	n.OutsideRefund = &OutsideRefund{Kind: OutsideRefundFull, PaymentID: o.Payment.ID, DetectedAt: now}
	slog.WarnContext(ctx, "order refunded at the acquirer, outside tix: refunding it", "order_id", o.ID, "payment_id", o.Payment.ID)
	return s.orders.completeRefund(ctx, &n)
}

// partlyRefundedOutside follows a partial refund made at the acquirer: the
// order stays paid (which tickets the money was for only the organizer
// knows), flagged for the operator, and its owners are alerted.
func (s *Payments) partlyRefundedOutside(ctx context.Context, o *Order, u PaymentUpdate) error {
	now := s.now()
	slog.ErrorContext(ctx, "order partly refunded at the acquirer, outside tix: flagged for the operator", "order_id", o.ID, "payment_id", u.PaymentID)
	if s.Alerts != nil {
		if err := s.Alerts.PartlyRefundedOutside(ctx, o.OrganizerID, o.ID, u.PaymentID, now); err != nil {
			return err // raised again on the next look; it is sent once
		}
	}
	n := *o
	n.OutsideRefund = &OutsideRefund{Kind: OutsideRefundPartial, PaymentID: u.PaymentID, DetectedAt: now}
	return s.OrderStore.SaveOrder(ctx, &n, OrderPaid, nil, nil)
}
