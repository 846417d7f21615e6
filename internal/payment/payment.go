// Package payment holds the SBP payment providers. Test is the test-mode
// provider: it answers like an acquirer (a payment link per order, a QR image
// of it, refunds that settle later) but never moves money.
package payment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"tix/internal/ticketing"
)

// ProviderSBP is the Provider of every payment made through the SBP port.
const ProviderSBP = "sbp"

// DefaultRefundSettleAfter is the test provider's refund delay when
// TestOptions.RefundSettleAfter is not positive: a zero RefundAccepted.SettleAfter
// means "settled by callback", which the test provider never sends.
const DefaultRefundSettleAfter = time.Minute

// ErrInvalidRequest marks a payment request the provider refuses as malformed.
var ErrInvalidRequest = errors.New("invalid payment request")

// TestOptions configures the test provider.
type TestOptions struct {
	// RefundSettleAfter is how long a refund takes to return the money.
	RefundSettleAfter time.Duration
	// Fail, when set and returning an error, makes CreatePayment fail with it
	// (wrapped): tests use it to simulate an unavailable provider.
	Fail func(ticketing.PaymentRequest) error
}

// Test is the SBP test provider. It is stateless: the payment id is derived
// from the order id, so asking twice for one order returns the same payment.
type Test struct {
	opts TestOptions
}

var (
	_ ticketing.PaymentProvider = (*Test)(nil)
	_ ticketing.OfflinePayments = (*Test)(nil)
)

// NewTest returns the test provider.
func NewTest(opts TestOptions) *Test {
	if opts.RefundSettleAfter <= 0 {
		opts.RefundSettleAfter = DefaultRefundSettleAfter
	}
	return &Test{opts: opts}
}

// linkBase is the NSPK payment-link host: SBP links are universal links that
// open the bank chooser on a phone.
const linkBase = "https://qr.nspk.ru/"

// testIDPrefix starts every test payment id. Real NSPK ids start with the
// link kind (AD, AS, BD, ...); "TS" is none of them, so a test link can never
// name a real payment.
const testIDPrefix = "TS"

// idLen is the length of an NSPK payment id, which test ids keep.
const idLen = 32

// PaymentsOffline marks the test provider as one whose payments need no call
// out: the order is written with its payment.
func (p *Test) PaymentsOffline() {}

// CreatePayment returns the order's test payment: an NSPK-style dynamic link
// (type=02) for the amount, marked test=1, with the crc real links carry.
func (p *Test) CreatePayment(ctx context.Context, r ticketing.PaymentRequest) (ticketing.Payment, error) {
	if err := ctx.Err(); err != nil {
		return ticketing.Payment{}, err
	}
	switch {
	case r.OrderID == "":
		return ticketing.Payment{}, fmt.Errorf("%w: no order id", ErrInvalidRequest)
	case r.Amount <= 0:
		return ticketing.Payment{}, fmt.Errorf("%w: amount %d kopecks, want > 0", ErrInvalidRequest, r.Amount)
	case r.Currency != "RUB":
		return ticketing.Payment{}, fmt.Errorf("%w: currency %q, SBP takes only RUB", ErrInvalidRequest, r.Currency)
	}
	if p.opts.Fail != nil {
		if err := p.opts.Fail(r); err != nil {
			return ticketing.Payment{}, fmt.Errorf("sbp test provider: create payment for order %s: %w", r.OrderID, err)
		}
	}
	id := paymentID(r.OrderID)
	payload := link(id, r.Amount)
	return ticketing.Payment{
		Provider:  ProviderSBP,
		ID:        id,
		Payload:   payload,
		DeepLink:  payload,
		ExpiresAt: r.ExpiresAt,
	}, nil
}

// Refund accepts the refund; the money "returns" after RefundSettleAfter. The
// provider keeps no state, so a repeated refund gets the same answer.
func (p *Test) Refund(ctx context.Context, r ticketing.RefundRequest) (ticketing.RefundAccepted, error) {
	if err := ctx.Err(); err != nil {
		return ticketing.RefundAccepted{}, err
	}
	return ticketing.RefundAccepted{SettleAfter: p.opts.RefundSettleAfter}, nil
}

// QRImage renders payload as a PNG QR code (medium error correction, about
// 256 px, whole pixels per module) in a data URI.
func (p *Test) QRImage(payload string) (string, error) {
	return QRImage(payload)
}

// qrTargetPx is the QR image's approximate width.
const qrTargetPx = 256

// QRImage renders payload as a PNG QR code data URI (data:image/png;base64,...).
func QRImage(payload string) (string, error) {
	if payload == "" {
		return "", errors.New("qr image: empty payload")
	}
	q, err := qrcode.New(payload, qrcode.Medium)
	if err != nil {
		return "", fmt.Errorf("qr image: %w", err)
	}
	// Whole pixels per module keep every module the same size, which scanners
	// like and PNG compresses well; a negative size asks for that scale.
	modules := len(q.Bitmap()) // includes the quiet zone
	scale := max(1, qrTargetPx/modules)
	png, err := q.PNG(-scale)
	if err != nil {
		return "", fmt.Errorf("qr image: %w", err)
	}
	var b bytes.Buffer
	b.Grow(len("data:image/png;base64,") + base64.StdEncoding.EncodedLen(len(png)))
	b.WriteString("data:image/png;base64,")
	b.WriteString(base64.StdEncoding.EncodeToString(png))
	return b.String(), nil
}

// idEncoding is base32 with the "extended hex" alphabet (0-9, A-V), the
// alphabet of NSPK payment ids.
var idEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

// paymentID derives the test payment id from the order id: "TS" and 30
// characters of a SHA-256, 32 characters like a real NSPK id.
func paymentID(orderID string) string {
	sum := sha256.Sum256([]byte("tix/sbp-test/" + orderID))
	return testIDPrefix + idEncoding.EncodeToString(sum[:])[:idLen-len(testIDPrefix)]
}

// link builds a test payment link in the NSPK format: the id, type=02 (a
// one-time, dynamic link), sum in kopecks, cur=RUB, test=1, and crc, the
// CRC-16/CCITT-FALSE of everything before "&crc=" as four uppercase hex digits,
// computed as NSPK computes it for real links.
func link(id string, kopecks int64) string {
	s := linkBase + id + "?type=02&sum=" + strconv.FormatInt(kopecks, 10) + "&cur=RUB&test=1"
	return s + "&crc=" + NSPKChecksum(s)
}

// NSPKChecksum is the crc member of an NSPK payment link: CRC-16/CCITT-FALSE of
// everything before "&crc=", as four uppercase hex digits.
func NSPKChecksum(s string) string { return fmt.Sprintf("%04X", crc16CCITTFalse(s)) }

// crc16CCITTFalse is CRC-16/CCITT-FALSE: polynomial 0x1021, initial value
// 0xFFFF, no reflection, no final xor.
func crc16CCITTFalse(s string) uint16 {
	crc := uint16(0xFFFF)
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
