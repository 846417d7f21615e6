// Package paymenttest holds the contract every ticketing.PaymentProvider meets,
// so that the test provider and a live acquirer's fake run the same checks.
package paymenttest

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// ProviderContract checks p against the PaymentProvider contract: payments are
// idempotent per order id and distinct across orders, the payload carries the
// amount, the order's expiry is echoed, malformed requests are refused, and
// QRImage renders a PNG of sensible size.
func ProviderContract(t *testing.T, p ticketing.PaymentProvider) {
	t.Helper()
	c := contract{p: p, ctx: context.Background(), expires: time.Date(2030, 5, 17, 12, 30, 0, 0, time.UTC)}
	t.Run("same order gives the same payment", c.samePayment)
	t.Run("different orders give different payments", c.distinctPayments)
	t.Run("payload carries the amount and expiry is echoed", c.amountAndExpiry)
	t.Run("malformed requests are refused", c.malformedRefused)
	t.Run("refund is accepted the same way twice", c.refundTwice)
	t.Run("QR image is a PNG of sensible size", c.qrImage)
}

// contract is one provider under the contract's checks.
type contract struct {
	p       ticketing.PaymentProvider
	ctx     context.Context
	expires time.Time
}

// req is a test payment request for orderID of amount kopecks.
func (c contract) req(orderID string, amount int64) ticketing.PaymentRequest {
	return ticketing.PaymentRequest{
		OrderID: orderID, Environment: ticketing.EnvTest, Amount: amount, Currency: "RUB",
		Description: "Order " + orderID, ExpiresAt: c.expires, ReturnURL: "https://example.com/orders/" + orderID,
	}
}

// samePayment: a retried CreatePayment for one order answers the same payment.
func (c contract) samePayment(t *testing.T) {
	first, err := c.p.CreatePayment(c.ctx, c.req("ord-contract-1", 150000))
	if err != nil {
		t.Fatalf("CreatePayment: %v", err)
	}
	second, err := c.p.CreatePayment(c.ctx, c.req("ord-contract-1", 150000))
	if err != nil {
		t.Fatalf("CreatePayment again: %v", err)
	}
	if first.ID == "" || first.ID != second.ID || first.Payload != second.Payload {
		t.Errorf("retried payment differs: %+v then %+v", first, second)
	}
	if first.Provider != "sbp" {
		t.Errorf("Provider = %q, want sbp", first.Provider)
	}
	if first.Payload == "" || first.DeepLink == "" {
		t.Errorf("empty payload or deep link: %+v", first)
	}
}

// distinctPayments: two orders never share a payment.
func (c contract) distinctPayments(t *testing.T) {
	a, errA := c.p.CreatePayment(c.ctx, c.req("ord-contract-a", 1000))
	b, errB := c.p.CreatePayment(c.ctx, c.req("ord-contract-b", 1000))
	if errA != nil || errB != nil {
		t.Fatalf("CreatePayment: %v, %v", errA, errB)
	}
	if a.ID == b.ID || a.Payload == b.Payload {
		t.Errorf("two orders share a payment: %+v and %+v", a, b)
	}
}

// amountAndExpiry: the payload carries the amount in kopecks and the order's expiry is echoed.
func (c contract) amountAndExpiry(t *testing.T) {
	for _, amount := range []int64{1, 99, 250050} {
		pay, err := c.p.CreatePayment(c.ctx, c.req("ord-contract-amount-"+strconv.FormatInt(amount, 10), amount))
		if err != nil {
			t.Fatalf("CreatePayment(%d): %v", amount, err)
		}
		u, err := url.Parse(pay.Payload)
		if err != nil || u.Query().Get("sum") != strconv.FormatInt(amount, 10) {
			t.Errorf("payload %q does not carry sum=%d (the amount in kopecks)", pay.Payload, amount)
		}
		if !pay.ExpiresAt.Equal(c.expires) {
			t.Errorf("ExpiresAt = %v, want the order's %v", pay.ExpiresAt, c.expires)
		}
	}
}

// malformedRefused: a zero or negative amount, or a currency other than RUB, is refused.
func (c contract) malformedRefused(t *testing.T) {
	bad := map[string]ticketing.PaymentRequest{
		"zero amount":     c.req("ord-contract-bad-1", 0),
		"negative amount": c.req("ord-contract-bad-2", -100),
	}
	usd := c.req("ord-contract-bad-3", 100)
	usd.Currency = "USD"
	bad["currency other than RUB"] = usd
	for name, r := range bad {
		if pay, err := c.p.CreatePayment(c.ctx, r); err == nil {
			t.Errorf("%s: got payment %+v, want an error", name, pay)
		}
	}
}

// refundTwice: a retried refund is answered the same way.
func (c contract) refundTwice(t *testing.T) {
	pay, err := c.p.CreatePayment(c.ctx, c.req("ord-contract-refund", 5000))
	if err != nil {
		t.Fatalf("CreatePayment: %v", err)
	}
	r := ticketing.RefundRequest{
		OrderID: "ord-contract-refund", RefundID: "ref-contract-1", PaymentID: pay.ID,
		Environment: ticketing.EnvTest, Amount: 5000, Currency: "RUB",
	}
	first, err := c.p.Refund(c.ctx, r)
	if err != nil {
		t.Fatalf("Refund: %v", err)
	}
	second, err := c.p.Refund(c.ctx, r)
	if err != nil {
		t.Fatalf("Refund again: %v", err)
	}
	if first != second || first.SettleAfter < 0 {
		t.Errorf("refund answers %+v then %+v, want the same non-negative answer", first, second)
	}
}

// qrImage: QRImage renders a square PNG small enough to inline.
func (c contract) qrImage(t *testing.T) {
	pay, err := c.p.CreatePayment(c.ctx, c.req("ord-contract-qr", 123456))
	if err != nil {
		t.Fatalf("CreatePayment: %v", err)
	}
	uri, err := c.p.QRImage(pay.Payload)
	if err != nil {
		t.Fatalf("QRImage: %v", err)
	}
	const prefix = "data:image/png;base64,"
	if !strings.HasPrefix(uri, prefix) {
		t.Fatalf("QRImage = %.40q..., want a %s data URI", uri, prefix)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(uri, prefix))
	if err != nil {
		t.Fatalf("QR image is not base64: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("QR image is not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != b.Dy() || b.Dx() < 128 || b.Dx() > 1024 {
		t.Errorf("QR image is %dx%d, want a square of 128..1024 px", b.Dx(), b.Dy())
	}
	if len(raw) > 16<<10 {
		t.Errorf("QR image is %d bytes, want it small enough to inline in a response", len(raw))
	}
}
