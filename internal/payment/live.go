package payment

import (
	"context"
	"errors"
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
	// Taxation and VAT go into every receipt (54-FZ); with Taxation empty no
	// Receipt is sent (a terminal without an online cash register).
	Taxation, VAT string
}

var (
	_ ticketing.PaymentProvider = (*Live)(nil)
	_ ticketing.PaymentStater   = (*Live)(nil)
)

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
		Receipt: p.receipt(r.Email, r.Items),
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

// Refund returns a paid payment's money through Cancel, whole: the amount
// asked must be the payment's own as the bank reports it (a partial Cancel is
// never sent). The bank settles SBP refunds later and says so by
// notification (or GetState), so SettleAfter is 0. Asking again finds the
// refund already under way and changes nothing; a payment never paid is
// voided, so it can no longer be paid. A payment partly refunded at the bank,
// or in a state tix does not know, is refused: that is for the operator.
func (p *Live) Refund(ctx context.Context, r ticketing.RefundRequest) (ticketing.RefundAccepted, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	st, err := p.Client.GetState(ctx, r.PaymentID)
	if err != nil {
		return ticketing.RefundAccepted{}, fmt.Errorf("sbp live provider: state of payment %s for refund %s: %w", r.PaymentID, r.RefundID, err)
	}
	req := tbank.CancelRequest{PaymentId: r.PaymentID}
	switch st.Status {
	case tbank.StatusAsyncRefunding, tbank.StatusRefunded, tbank.StatusCanceled, tbank.StatusRejected, tbank.StatusDeadlineExpired:
		return ticketing.RefundAccepted{}, nil // under way, done, or never paid: nothing to return
	case tbank.StatusConfirmed:
		if r.Amount != st.Amount {
			return ticketing.RefundAccepted{}, fmt.Errorf("sbp live provider: refund %s of %d kopecks, but payment %s is of %d: only a whole payment is returned",
				r.RefundID, r.Amount, r.PaymentID, st.Amount)
		}
		req.Amount = st.Amount
		req.Receipt = p.receipt(r.Email, r.Items) // the refund receipt: what is returned
	case tbank.StatusNew, tbank.StatusFormShowed, statusAuthorized:
		// not paid: the whole payment is voided (Amount 0), no receipt
	default: // PARTIAL_REFUNDED, or a state the bank added
		return ticketing.RefundAccepted{}, fmt.Errorf("sbp live provider: payment %s is %s at the bank; refund %s is left to the operator",
			r.PaymentID, st.Status, r.RefundID)
	}
	if _, err := p.Client.Cancel(ctx, req); err != nil {
		return ticketing.RefundAccepted{}, fmt.Errorf("sbp live provider: refund %s of payment %s: %w", r.RefundID, r.PaymentID, err)
	}
	return ticketing.RefundAccepted{}, nil
}

// statusAuthorized is a two-stage payment's state before confirmation.
const statusAuthorized = "AUTHORIZED"

// PaymentState asks the bank for a payment's state: what every money
// decision is taken from. A payment the bank refuses to tell of is
// ticketing.ErrUnknownPayment; an unanswered question stays a transport error.
func (p *Live) PaymentState(ctx context.Context, paymentID string) (ticketing.PaymentUpdate, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	st, err := p.Client.GetState(ctx, paymentID)
	var refusal *tbank.Error
	if errors.As(err, &refusal) && refusal.Code != tbank.CodeBadToken && refusal.Code != tbank.CodeTerminalNotFound {
		return ticketing.PaymentUpdate{}, fmt.Errorf("sbp live provider: state of payment %s: %w: %w", paymentID, ticketing.ErrUnknownPayment, err)
	}
	if err != nil {
		return ticketing.PaymentUpdate{}, fmt.Errorf("sbp live provider: state of payment %s: %w", paymentID, err)
	}
	id := string(st.PaymentId)
	if id == "" {
		id = paymentID
	}
	return ticketing.PaymentUpdate{OrderID: st.OrderId, PaymentID: id, Amount: st.Amount, Status: Status(st.Status)}, nil
}

// Status is the domain's word for a bank payment status.
func Status(bank string) ticketing.PaymentStatus {
	switch bank {
	case tbank.StatusConfirmed:
		return ticketing.PaymentPaid
	case tbank.StatusRejected, tbank.StatusDeadlineExpired, tbank.StatusCanceled:
		return ticketing.PaymentFailed
	case tbank.StatusAsyncRefunding:
		return ticketing.PaymentRefunding
	case tbank.StatusPartialRefunded:
		return ticketing.PaymentPartlyRefunded
	case tbank.StatusRefunded:
		return ticketing.PaymentRefunded
	}
	return ticketing.PaymentWaiting // NEW, FORM_SHOWED, AUTHORIZED and states the bank adds
}

// receiptNameMax is a receipt item name's limit, in characters.
const receiptNameMax = 128

// receipt is the 54-FZ receipt of items: tickets are services, paid in full.
func (p *Live) receipt(email string, items []ticketing.PaymentItem) *tbank.Receipt {
	if p.Taxation == "" || len(items) == 0 {
		return nil
	}
	r := &tbank.Receipt{Email: email, Taxation: p.Taxation, Items: make([]tbank.ReceiptItem, len(items))}
	for i, it := range items {
		r.Items[i] = tbank.ReceiptItem{Name: truncate(it.Name, receiptNameMax), Price: it.UnitPrice, Quantity: float64(it.Quantity),
			Amount: it.UnitPrice * int64(it.Quantity), Tax: p.VAT, PaymentMethod: "full_payment", PaymentObject: "service"}
	}
	return r
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
