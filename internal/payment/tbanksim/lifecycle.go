package tbanksim

import (
	"fmt"
	"strings"
	"time"

	"tix/internal/payment/tbank"
)

// cancelPayment is Cancel: an unpaid payment becomes CANCELED; a confirmed
// one is refunded asynchronously (ASYNC_REFUNDING, then REFUNDED or
// PARTIAL_REFUNDED after RefundAfter).
func (s *Server) cancelPayment(terminal string, body []byte) (map[string]any, error) {
	var r struct {
		PaymentId  tbank.Text     `json:"PaymentId"`
		Amount     int64          `json:"Amount"`
		QrMemberId string         `json:"QrMemberId"`
		Receipt    *tbank.Receipt `json:"Receipt"`
	}
	if err := decode(body, &r); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.find(terminal, string(r.PaymentId))
	if err != nil {
		return nil, err
	}
	original := p.Amount - p.Refunded
	switch p.Status {
	case tbank.StatusNew, tbank.StatusFormShowed:
		s.setStatus(p, tbank.StatusCanceled)
		return s.cancelAnswer(p, original, 0), nil
	case tbank.StatusConfirmed, tbank.StatusPartialRefunded:
	default:
		return nil, errf("payment %s is %s and cannot be cancelled", p.ID, p.Status)
	}
	amount := r.Amount
	if amount == 0 {
		amount = original
	}
	if amount < 0 || amount > original {
		return nil, errf("refund of %d kopecks exceeds the %d left", amount, original)
	}
	if r.Receipt != nil {
		if err := checkReceipt(r.Receipt, amount); err != nil {
			return nil, err
		}
	}
	s.refund(p, amount)
	return s.cancelAnswer(p, original, original-amount), nil
}

// refund starts returning amount of a paid payment; s.mu is held.
func (s *Server) refund(p *Payment, amount int64) {
	p.Refunded += amount
	p.Status = tbank.StatusAsyncRefunding
	s.settleLater(p.ID)
}

// RefundInPortal returns amount (0: all that is left) of a confirmed or
// partly refunded payment the way an organizer does in the bank's own
// portal, outside the API: ASYNC_REFUNDING, then REFUNDED or
// PARTIAL_REFUNDED with its notification.
func (s *Server) RefundInPortal(paymentID string, amount int64) (Payment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[paymentID]
	if !ok {
		return Payment{}, fmt.Errorf("no payment %s", paymentID)
	}
	left := p.Amount - p.Refunded
	if p.Status != tbank.StatusConfirmed && p.Status != tbank.StatusPartialRefunded {
		return *p, fmt.Errorf("payment %s is %s: only a paid payment is refunded", p.ID, p.Status)
	}
	if amount == 0 {
		amount = left
	}
	if amount < 0 || amount > left {
		return *p, fmt.Errorf("refund of %d kopecks: %d are left", amount, left)
	}
	s.refund(p, amount)
	return *p, nil
}

func (s *Server) cancelAnswer(p *Payment, original, left int64) map[string]any {
	return map[string]any{"TerminalKey": p.TerminalKey, "OrderId": p.OrderID, "PaymentId": p.ID,
		"Status": p.Status, "OriginalAmount": original, "NewAmount": left}
}

// settleLater finishes a refund after RefundAfter.
func (s *Server) settleLater(id string) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-time.After(s.opts.RefundAfter):
		case <-s.ctx.Done():
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		p := s.payments[id]
		if p.Status != tbank.StatusAsyncRefunding {
			return
		}
		if p.Refunded >= p.Amount {
			s.setStatus(p, tbank.StatusRefunded)
		} else {
			s.setStatus(p, tbank.StatusPartialRefunded)
		}
	}()
}

// sbpPayTest is SbpPayTest: on a DEMO terminal, it forces a shown QR's
// outcome (paid, rejected, or expired).
func (s *Server) sbpPayTest(terminal string, body []byte) (map[string]any, error) {
	var r struct {
		PaymentId         tbank.Text `json:"PaymentId"`
		IsDeadlineExpired tbank.Flag `json:"IsDeadlineExpired"`
		IsRejected        tbank.Flag `json:"IsRejected"`
	}
	if err := decode(body, &r); err != nil {
		return nil, err
	}
	if !strings.HasSuffix(terminal, "DEMO") {
		return nil, errf("SbpPayTest works only on DEMO terminals")
	}
	if r.IsDeadlineExpired && r.IsRejected {
		return nil, errf("IsDeadlineExpired and IsRejected cannot both be true")
	}
	outcome := Pay
	switch {
	case bool(r.IsRejected):
		outcome = Reject
	case bool(r.IsDeadlineExpired):
		outcome = Expire
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.find(terminal, string(r.PaymentId))
	if err != nil {
		return nil, err
	}
	if _, err := s.settle(p, outcome); err != nil {
		return nil, errf("%v", err)
	}
	return map[string]any{}, nil
}

// resend is Resend: every notification not yet acknowledged is sent again.
func (s *Server) resend(terminal string, _ []byte) (map[string]any, error) {
	n := s.outbox.resend(terminal)
	return map[string]any{"TerminalKey": terminal, "Count": n}, nil
}

// Outcome is what a command does to an unpaid payment.
type Outcome string

// The outcomes of the pay, reject and expire commands.
const (
	Pay    Outcome = "pay"
	Reject Outcome = "reject"
	Expire Outcome = "expire"
)

// Settle applies outcome to the newest unpaid payment of orderID (any
// terminal), as if the buyer paid, the payer's bank refused, or the QR
// expired. Paying after the deadline expires the payment instead, unless
// the ConfirmAfterDeadline fault is on.
func (s *Server) Settle(orderID string, outcome Outcome) (Payment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *Payment
	for _, p := range s.payments {
		if p.OrderID == orderID && (found == nil || p.ID > found.ID) {
			found = p
		}
	}
	if found == nil {
		return Payment{}, fmt.Errorf("no payment for order %s", orderID)
	}
	return s.settle(found, outcome)
}

// settle applies outcome to p; s.mu is held.
func (s *Server) settle(p *Payment, outcome Outcome) (Payment, error) {
	late := s.opts.Now().After(p.Due)
	if late && s.faults.ConfirmAfterDeadline && outcome == Pay &&
		(p.Status == tbank.StatusDeadlineExpired || p.Status == tbank.StatusNew || p.Status == tbank.StatusFormShowed) {
		s.setStatus(p, tbank.StatusConfirmed)
		return *p, nil
	}
	s.expireIfDue(p)
	if p.Status != tbank.StatusNew && p.Status != tbank.StatusFormShowed {
		return *p, fmt.Errorf("payment %s of order %s is %s", p.ID, p.OrderID, p.Status)
	}
	switch outcome {
	case Pay:
		s.setStatus(p, tbank.StatusConfirmed)
	case Reject:
		s.setStatus(p, tbank.StatusRejected)
	case Expire:
		s.setStatus(p, tbank.StatusDeadlineExpired)
	default:
		return *p, fmt.Errorf("unknown outcome %q", outcome)
	}
	return *p, nil
}
