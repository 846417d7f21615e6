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
}

// RefundAccepted is the provider's answer to a refund request. The money returns
// later: SettleAfter > 0 means the provider settles on its own after that delay
// (the test provider); 0 means it reports settlement by callback (a live acquirer).
type RefundAccepted struct {
	SettleAfter time.Duration
}

// PaymentProvider is the SBP port. Implementations: payment.Test (a real,
// scannable QR for a test payload; never moves money) and, later, the live acquirer.
type PaymentProvider interface {
	// CreatePayment is idempotent per OrderID: asking again for the same order
	// returns the same payment, so a retried order creation never charges twice.
	CreatePayment(ctx context.Context, r PaymentRequest) (Payment, error)
	// Refund asks for the full amount back; it is idempotent per RefundID.
	Refund(ctx context.Context, r RefundRequest) (RefundAccepted, error)
	// QRImage renders payload as a PNG data URI (data:image/png;base64,...).
	QRImage(payload string) (string, error)
}
