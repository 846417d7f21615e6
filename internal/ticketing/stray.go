package ticketing

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Stray payments: money confirmed at the acquirer under one of tix's order
// ids through a payment that order does not own, or for an amount the
// acquirer reports as not the order's. tix never starts such a payment (the
// acquirer or a buyer reusing a link could), and money is never kept without
// tickets: it goes back in full, once. Each is recorded put-if-absent per
// payment id with the amount the acquirer reports, and a stray check
// (TimerStrayCheck, with its marker like every timer) asks the acquirer
// until the refund is settled. The operator lists them (tixctl payments
// strays). A payment that backs a paid order is never refunded this way.

// Stray payment statuses.
const (
	StrayRefundPending = "refund_pending" // the refund is asked for, not settled
	StrayRefunded      = "refunded"       // the money is back with the payer
)

// StrayPayment is one stray payment and the refund that returns it.
type StrayPayment struct {
	PaymentID   string      `json:"payment_id"`
	OrderID     string      `json:"order_id"`
	OrganizerID string      `json:"organizer_id"`
	Environment Environment `json:"environment"`
	// Amount is what the acquirer reports the payment to be, in kopecks: what
	// goes back.
	Amount     int64      `json:"amount"`
	Status     string     `json:"status"`
	DetectedAt time.Time  `json:"detected_at"`
	CheckAt    *time.Time `json:"check_at,omitempty"` // next stray check while pending
	RefundedAt *time.Time `json:"refunded_at,omitempty"`
	Version    int64      `json:"-"`
}

// CheckTimer is the stray check the payment waits for; false when settled.
func (p *StrayPayment) CheckTimer() (Timer, bool) {
	if p.Status != StrayRefundPending || p.CheckAt == nil {
		return Timer{}, false
	}
	return Timer{Kind: TimerStrayCheck, OrderID: p.OrderID, Due: *p.CheckAt}, true
}

// StrayStore keeps stray payments.
type StrayStore interface {
	// PutStray records p with the marker of its CheckTimer unless a stray
	// payment is recorded under its id: then it writes nothing and reports false.
	PutStray(ctx context.Context, p *StrayPayment) (bool, error)
	// OrderStrays lists the stray payments recorded under an order.
	OrderStrays(ctx context.Context, orderID string) ([]StrayPayment, error)
	// SaveStray rewrites p at its Version (ErrStateChanged otherwise), with
	// the markers in put written and those in done deleted, in one transaction.
	SaveStray(ctx context.Context, p *StrayPayment, put, done []Timer) error
	// ListStrays lists every stray payment, newest first.
	ListStrays(ctx context.Context) ([]StrayPayment, error)
}

// refundStray returns money that reached order o through payment u (as the
// acquirer reports it) which o does not own or which is not for o's amount.
func (s *Payments) refundStray(ctx context.Context, o *Order, u PaymentUpdate) error {
	if o.Payment != nil && o.Payment.ID == u.PaymentID && o.Status == OrderPaid {
		// The payment backs a paid order: refunding it is the order's refund,
		// never the stray path's.
		slog.ErrorContext(ctx, "the acquirer reports another amount for a paid order's payment: left to the operator",
			"order_id", o.ID, "payment_id", u.PaymentID, "amount", u.Amount, "order_total", o.TotalPrice)
		return nil
	}
	if s.Strays == nil {
		return errors.New("stray payment: no stray store to record it in")
	}
	now := s.now()
	at := now.Add(s.Settings.RefundCheckEvery)
	p := &StrayPayment{PaymentID: u.PaymentID, OrderID: o.ID, OrganizerID: o.OrganizerID, Environment: o.Environment,
		Amount: u.Amount, Status: StrayRefundPending, DetectedAt: now, CheckAt: &at}
	created, err := s.Strays.PutStray(ctx, p)
	if err != nil || !created {
		return err // recorded before: its stray check follows it up
	}
	slog.ErrorContext(ctx, "stray payment: refunding it", "order_id", o.ID, "payment_id", u.PaymentID, "amount", u.Amount)
	s.schedule(ctx, TimerStrayCheck, o.ID, at)
	return s.sendStrayRefund(ctx, o, p)
}

// sendStrayRefund asks the acquirer for the whole stray payment back
// (idempotent: the acquirer finds a refund under way and changes nothing).
func (s *Payments) sendStrayRefund(ctx context.Context, o *Order, p *StrayPayment) error {
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return err
	}
	r := o.refundRequest("stray_"+p.PaymentID, p.PaymentID)
	r.Amount, r.Items = p.Amount, []PaymentItem{{Name: o.EventTitle, UnitPrice: p.Amount, Quantity: 1}}
	_, err = prov.Refund(ctx, r)
	return err
}

// checkStrays is a stray check: each stray payment of the order still owed
// is asked about, settled when the acquirer reports it returned, asked for
// again when it still reports it paid, and checked again later otherwise.
func (s *Payments) checkStrays(ctx context.Context, o *Order) error {
	if s.Strays == nil {
		return nil
	}
	strays, err := s.Strays.OrderStrays(ctx, o.ID)
	if err != nil {
		return err
	}
	var errs []error
	for i := range strays {
		p := &strays[i]
		t, owed := p.CheckTimer()
		if !owed {
			continue
		}
		if s.now().Before(t.Due) {
			s.schedule(ctx, t.Kind, o.ID, t.Due)
			continue
		}
		errs = append(errs, s.checkStray(ctx, o, p, t))
	}
	return errors.Join(errs...)
}

// checkStray asks the acquirer about one stray payment and records the answer.
func (s *Payments) checkStray(ctx context.Context, o *Order, p *StrayPayment, old Timer) error {
	prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
	if err != nil {
		return err
	}
	st, ok := prov.(PaymentStater)
	if !ok {
		return errors.New("stray check: the order's acquirer cannot be asked; will retry")
	}
	u, err := st.PaymentState(ctx, p.PaymentID)
	if err != nil {
		return err
	}
	switch u.Status {
	case PaymentRefunded, PaymentFailed:
		return s.strayRefunded(ctx, p, old)
	case PaymentPaid:
		if err := s.sendStrayRefund(ctx, o, p); err != nil {
			return err
		}
	}
	at := s.now().Add(s.Settings.RefundCheckEvery)
	n := *p
	n.CheckAt = &at
	next, _ := n.CheckTimer()
	if err := s.Strays.SaveStray(ctx, &n, []Timer{next}, []Timer{old}); err != nil {
		return err
	}
	s.schedule(ctx, next.Kind, o.ID, at)
	return nil
}

// strayRefunded records that a stray payment is back with its payer.
func (s *Payments) strayRefunded(ctx context.Context, p *StrayPayment, old Timer) error {
	now := s.now()
	n := *p
	n.Status, n.RefundedAt, n.CheckAt = StrayRefunded, &now, nil
	slog.InfoContext(ctx, "stray payment refunded", "order_id", p.OrderID, "payment_id", p.PaymentID, "amount", p.Amount)
	return s.Strays.SaveStray(ctx, &n, nil, []Timer{old})
}

// strayNotified settles a recorded stray payment the acquirer reports
// refunded (its notification, or any other look).
func (s *Payments) strayNotified(ctx context.Context, o *Order, paymentID string) error {
	if s.Strays == nil {
		return nil
	}
	strays, err := s.Strays.OrderStrays(ctx, o.ID)
	if err != nil {
		return err
	}
	for i := range strays {
		p := &strays[i]
		if t, owed := p.CheckTimer(); owed && p.PaymentID == paymentID {
			return s.strayRefunded(ctx, p, t)
		}
	}
	return nil
}
