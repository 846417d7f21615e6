package ticketing

import (
	"context"
	"time"
)

// PaymentRequest asks the SBP provider for a charge of one order.
type PaymentRequest struct {
	OrderID     string
	Environment Environment
	Amount      int64 // kopecks, > 0
	Currency    string
	Description string
	ExpiresAt   time.Time // the order's expiry: the QR must not outlive it
	ReturnURL   string
	// Email and Items make the fiscal receipt (54-FZ) a live acquirer's cash
	// register issues: the buyer's address and one item per order line.
	Email string
	Items []PaymentItem
}

// PaymentItem is one line of a payment's receipt: Quantity units at UnitPrice
// (kopecks); the items' amounts add up to the payment's.
type PaymentItem struct {
	Name      string
	UnitPrice int64
	Quantity  int
}

// ReceiptItems are the receipt lines of an order: one per order line, named
// after the event and the tier (and seat); a discount is spread over the
// lines so that their amounts add up to the total paid.
func (o *Order) ReceiptItems() []PaymentItem {
	items := make([]PaymentItem, 0, len(o.Lines))
	left := o.BasePrice - o.TotalPrice // discount still to spread, kopecks
	for i, l := range o.Lines {
		name := o.EventTitle + ": " + l.TierName
		if l.Seat != nil && l.Seat.Label != "" {
			name += ", " + l.Seat.Label
		}
		amount := l.UnitPrice * int64(l.Quantity)
		cut := int64(0)
		if left > 0 { // a discount (so BasePrice > TotalPrice >= 0)
			// The line's share of it, rounded down; the last line takes what is left.
			cut = min((o.BasePrice-o.TotalPrice)*amount/o.BasePrice, left)
			if i == len(o.Lines)-1 {
				cut = left
			}
			left -= cut
		}
		if cut%int64(l.Quantity) == 0 {
			items = append(items, PaymentItem{Name: name, UnitPrice: (amount - cut) / int64(l.Quantity), Quantity: l.Quantity})
			continue
		}
		// A discount that does not divide by the quantity (so Quantity > 1, as
		// every cut divides by 1): one unit takes the rest.
		unit := (amount - cut) / int64(l.Quantity)
		rest := amount - cut - unit*int64(l.Quantity-1)
		items = append(items, PaymentItem{Name: name, UnitPrice: unit, Quantity: l.Quantity - 1},
			PaymentItem{Name: name, UnitPrice: rest, Quantity: 1})
	}
	return items
}

// Payment is what the provider returns for a charge: the SBP link a QR encodes.
// The QR image is not stored; it is rendered from Payload on each response.
type Payment struct {
	Provider  string    `json:"provider"` // "sbp"
	ID        string    `json:"id"`       // the provider's payment id
	Payload   string    `json:"payload"`  // the SBP link the QR encodes
	DeepLink  string    `json:"deep_link"`
	ExpiresAt time.Time `json:"expires_at"`
}

// RefundRequest asks the provider to return a paid order's money in full.
type RefundRequest struct {
	OrderID     string
	RefundID    string
	PaymentID   string
	Environment Environment
	Amount      int64
	Currency    string
	// Email and Items make the refund's receipt: what is returned.
	Email string
	Items []PaymentItem
}

// RefundAccepted is the provider's answer to a refund request. The money returns
// later: SettleAfter > 0 means the provider settles on its own after that delay
// (the test provider); 0 means it reports settlement by callback (a live acquirer).
type RefundAccepted struct {
	SettleAfter time.Duration
}

// PaymentProvider is the SBP port. Implementations: payment.Test (a real,
// scannable QR for a test payload; never moves money) and payment.Live (an
// organizer's T-Bank terminal).
type PaymentProvider interface {
	// CreatePayment is idempotent per OrderID: asking again for the same order
	// returns the same payment, so a retried order creation never charges twice.
	CreatePayment(ctx context.Context, r PaymentRequest) (Payment, error)
	// Refund asks for the full amount back; it is idempotent per RefundID.
	Refund(ctx context.Context, r RefundRequest) (RefundAccepted, error)
	// QRImage renders payload as a PNG data URI (data:image/png;base64,...).
	QRImage(payload string) (string, error)
}

// OfflinePayments is implemented by a provider whose CreatePayment calls no
// one and answers from the request alone (the test provider): an order's
// payment is then made before the order is written and stored in the order's
// own transaction, instead of a write of its own after it.
type OfflinePayments interface{ PaymentsOffline() }

// PaymentStatus is a payment's state as the acquirer reports it, in the
// domain's words.
type PaymentStatus string

// Payment statuses.
const (
	PaymentWaiting   PaymentStatus = "waiting"   // not paid yet: it still can be
	PaymentPaid      PaymentStatus = "paid"      // the money is ours
	PaymentFailed    PaymentStatus = "failed"    // rejected, expired or cancelled unpaid: it never will be
	PaymentRefunding PaymentStatus = "refunding" // a refund is under way
	PaymentRefunded  PaymentStatus = "refunded"  // the money went back
	// PaymentPartlyRefunded: part of the money went back, the rest is still paid.
	PaymentPartlyRefunded PaymentStatus = "partly_refunded"
)

// PaymentUpdate is what the acquirer says of one payment, from a verified
// notification or a state query.
type PaymentUpdate struct {
	OrganizerID string
	OrderID     string
	PaymentID   string
	Amount      int64
	Status      PaymentStatus
}

// PaymentStater is a provider that can be asked for a payment's state (a
// live acquirer): reconciliation asks it when a notification may be lost.
type PaymentStater interface {
	PaymentState(ctx context.Context, paymentID string) (PaymentUpdate, error)
}

// PaymentAccount is an organizer's own acquiring terminal, which its live
// orders are paid into, and what its fiscal receipts say. The password is
// stored sealed (encrypted under the keyring) and never shown.
type PaymentAccount struct {
	OrganizerID    string `json:"organizer_id"`
	Acquirer       string `json:"acquirer"` // "tbank"
	TerminalKey    string `json:"terminal_key"`
	SealedPassword string `json:"sealed_password"`
	// Taxation is the organizer's tax system as the receipt names it (osn,
	// usn_income, usn_income_outcome, esn, patent); VAT the rate of its
	// ticket sales (none, vat0, vat5, vat7, vat10, vat20, vat22).
	Taxation    string    `json:"taxation"`
	VAT         string    `json:"vat"`
	ConnectedAt time.Time `json:"connected_at"`
	CheckedAt   time.Time `json:"checked_at"` // the last successful call with these credentials
}

// AcquirerTBank names T-Bank Internet Acquiring.
const AcquirerTBank = "tbank"
