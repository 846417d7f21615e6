package payment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/ticketing"
)

// descriptionMax is Init's Description limit, in characters.
const descriptionMax = 140

// Live is the SBP provider for live orders: one organizer's T-Bank terminal.
// CreatePayment is idempotent per order through CheckOrder (the API has no
// idempotency key), so a retried order creation finds the payment it already
// started instead of charging twice; failures are errors, which ticketing
// answers with 502 payment_provider_error.
type Live struct {
	Client *tbank.Client
	// NotificationURL is where the bank posts this terminal's notifications.
	NotificationURL string
	// Timeout bounds each call to the bank (tbank.DefaultTimeout when zero).
	Timeout time.Duration
}

var _ ticketing.PaymentProvider = (*Live)(nil)

// CreatePayment returns the order's payment: the one an earlier attempt
// started, or a new one (Init with RedirectDueDate at the order's expiry),
// with its SBP link from GetQr.
func (p *Live) CreatePayment(ctx context.Context, r ticketing.PaymentRequest) (ticketing.Payment, error) {
	if err := validateLive(r); err != nil {
		return ticketing.Payment{}, err
	}
	ctx, cancel := p.bound(ctx)
	defer cancel()
	id, _, err := p.Client.StartPayment(ctx, tbank.InitRequest{
		Amount: r.Amount, OrderId: r.OrderID, Description: truncate(r.Description, descriptionMax),
		NotificationURL: p.NotificationURL, RedirectDueDate: tbank.DueDate(r.ExpiresAt),
	})
	if err != nil {
		return ticketing.Payment{}, fmt.Errorf("sbp live provider: start payment for order %s: %w", r.OrderID, err)
	}
	qr, err := p.Client.GetQr(ctx, id)
	if err != nil {
		return ticketing.Payment{}, fmt.Errorf("sbp live provider: QR of payment %s for order %s: %w", id, r.OrderID, err)
	}
	if !strings.HasPrefix(qr.Data, linkBase) {
		return ticketing.Payment{}, fmt.Errorf("sbp live provider: payment %s: QR payload %q is not an NSPK link", id, qr.Data)
	}
	return ticketing.Payment{Provider: ProviderSBP, ID: id, Payload: qr.Data, DeepLink: qr.Data, ExpiresAt: r.ExpiresAt}, nil
}

// Refund returns a paid payment's money through Cancel. The bank settles SBP
// refunds later and says so by notification (or GetState), so SettleAfter is
// 0. Asking again finds the refund already under way and changes nothing;
// a payment never paid is cancelled, so it can no longer be paid.
func (p *Live) Refund(ctx context.Context, r ticketing.RefundRequest) (ticketing.RefundAccepted, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	st, err := p.Client.GetState(ctx, r.PaymentID)
	if err != nil {
		return ticketing.RefundAccepted{}, fmt.Errorf("sbp live provider: state of payment %s for refund %s: %w", r.PaymentID, r.RefundID, err)
	}
	switch st.Status {
	case tbank.StatusAsyncRefunding, tbank.StatusRefunded, tbank.StatusCanceled:
		return ticketing.RefundAccepted{}, nil
	}
	if _, err := p.Client.Cancel(ctx, tbank.CancelRequest{PaymentId: r.PaymentID, Amount: r.Amount}); err != nil {
		return ticketing.RefundAccepted{}, fmt.Errorf("sbp live provider: refund %s of payment %s: %w", r.RefundID, r.PaymentID, err)
	}
	return ticketing.RefundAccepted{}, nil
}

// QRImage renders payload as a PNG data URI.
func (p *Live) QRImage(payload string) (string, error) { return QRImage(payload) }

func (p *Live) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	d := p.Timeout
	if d <= 0 {
		d = tbank.DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}

func validateLive(r ticketing.PaymentRequest) error {
	switch {
	case r.OrderID == "":
		return fmt.Errorf("%w: no order id", ErrInvalidRequest)
	case r.Amount <= 0:
		return fmt.Errorf("%w: amount %d kopecks, want > 0", ErrInvalidRequest, r.Amount)
	case r.Currency != "RUB":
		return fmt.Errorf("%w: currency %q, SBP takes only RUB", ErrInvalidRequest, r.Currency)
	case r.ExpiresAt.IsZero():
		return fmt.Errorf("%w: no expiry for the QR", ErrInvalidRequest)
	}
	return nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
