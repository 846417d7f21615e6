// Package tbank is a client of T-Bank Internet Acquiring API v2, the SBP
// (dynamic QR) part tix needs: Init, GetQr, GetState, Cancel, CheckOrder,
// Resend and SbpPayTest, and the check of the bank's notifications.
//
// It is small and our own rather than the public `tinkoff` Go client because
// that client checks notifications over a fixed list of fields (the bank adds
// fields, and a fixed list then rejects genuine notifications or, worse,
// leaves new fields unsigned) and cannot send QrMemberId on refunds, which SBP
// refunds may need.
package tbank

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultBaseURL is the production API; DEMO terminals use it too.
const DefaultBaseURL = "https://securepay.tinkoff.ru"

// DefaultTimeout bounds one call when the caller's context has no earlier
// deadline.
const DefaultTimeout = 10 * time.Second

// maxAnswer caps how much of an answer is read.
const maxAnswer = 1 << 20

// Client calls the API for one terminal. It never retries: a call whose
// outcome is unknown returns ErrTransport, and the caller decides (for Init:
// CheckOrder first, see Client.StartPayment).
type Client struct {
	BaseURL     string // without /v2
	TerminalKey string
	Password    string
	HTTP        *http.Client // nil: a client with DefaultTimeout
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: DefaultTimeout}
}

// enveloped is every answer: it embeds Answer.
type enveloped interface{ envelope() Answer }

// call POSTs req, signed, to {BaseURL}/v2/{method} and decodes the answer into
// out. A refusal by the bank is an *Error; anything that leaves the outcome
// unknown wraps ErrTransport.
func (c *Client) call(ctx context.Context, method string, req any, out enveloped) error {
	body, err := c.signedBody(req)
	if err != nil {
		return fmt.Errorf("tbank %s: %w", method, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	url := strings.TrimRight(c.BaseURL, "/") + "/v2/" + method
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("tbank %s: %w", method, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.httpClient().Do(hr)
	if err != nil {
		return fmt.Errorf("tbank %s: %w: %w", method, ErrTransport, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("tbank %s: %w: read answer: %w", method, ErrTransport, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("tbank %s: %w: HTTP %d", method, ErrTransport, resp.StatusCode)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("tbank %s: %w: answer is not JSON: %w", method, ErrTransport, err)
	}
	if a := out.envelope(); !bool(a.Success) || (a.ErrorCode != "" && a.ErrorCode != CodeOK) {
		return &Error{Method: method, Code: string(a.ErrorCode), Message: a.Message, Details: a.Details}
	}
	return nil
}

// signedBody marshals req with TerminalKey and signs it.
func (c *Client) signedBody(req any) ([]byte, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	root["TerminalKey"], _ = json.Marshal(c.TerminalKey)
	b, err = json.Marshal(root)
	if err != nil {
		return nil, err
	}
	return sign(b, c.Password)
}

// Init starts a payment session. Init is not idempotent: on ErrTransport the
// bank may have created the payment, so look it up with CheckOrder before
// calling Init again (StartPayment does).
func (c *Client) Init(ctx context.Context, r InitRequest) (InitAnswer, error) {
	var a InitAnswer
	return a, c.call(ctx, "Init", r, &a)
}

// GetQr returns the payment's SBP QR; with DataType PAYLOAD (the default
// here) Data is the https://qr.nspk.ru/... link.
func (c *Client) GetQr(ctx context.Context, paymentID string) (GetQrAnswer, error) {
	var a GetQrAnswer
	return a, c.call(ctx, "GetQr", GetQrRequest{PaymentId: paymentID, DataType: "PAYLOAD"}, &a)
}

// GetState returns the payment's current status.
func (c *Client) GetState(ctx context.Context, paymentID string) (StateAnswer, error) {
	var a StateAnswer
	return a, c.call(ctx, "GetState", PaymentIDRequest{PaymentId: paymentID}, &a)
}

// Cancel cancels an unpaid payment or refunds a confirmed one.
func (c *Client) Cancel(ctx context.Context, r CancelRequest) (CancelAnswer, error) {
	var a CancelAnswer
	return a, c.call(ctx, "Cancel", r, &a)
}

// SbpPayTest forces the outcome of a DEMO terminal's SBP payment.
func (c *Client) SbpPayTest(ctx context.Context, r SbpPayTestRequest) error {
	var a Answer
	return c.call(ctx, "SbpPayTest", r, &a)
}

// Resend asks the bank to send again the notifications not yet acknowledged.
func (c *Client) Resend(ctx context.Context) (ResendAnswer, error) {
	var a ResendAnswer
	return a, c.call(ctx, "Resend", struct{}{}, &a)
}

// CheckOrder lists the payments made under our OrderId.
func (c *Client) CheckOrder(ctx context.Context, orderID string) (CheckOrderAnswer, error) {
	var a CheckOrderAnswer
	return a, c.call(ctx, "CheckOrder", CheckOrderRequest{OrderId: orderID}, &a)
}

// StartPayment returns the order's live payment: one CheckOrder finds a
// payment an earlier attempt started (NEW or FORM_SHOWED with the same
// amount, or one already paid), and only when there is none does it call
// Init. A retried order creation therefore never starts a second payment,
// even when the first Init's answer was lost. An order without payments is
// CheckOrder answering Success with an empty Payments list.
func (c *Client) StartPayment(ctx context.Context, r InitRequest) (paymentID string, started bool, err error) {
	found, err := c.CheckOrder(ctx, r.OrderId)
	if err != nil {
		// Any failure, a refusal included, stops here: calling Init without
		// knowing what the order already has could charge twice.
		return "", false, err
	}
	if id, ok := reusable(found.Payments, r.Amount); ok {
		return id, false, nil
	}
	a, err := c.Init(ctx, r)
	if err != nil {
		return "", false, err
	}
	if a.PaymentId == "" {
		return "", false, fmt.Errorf("tbank Init: %w: answer without PaymentId", ErrTransport)
	}
	return string(a.PaymentId), true, nil
}

// reusable picks the payment an earlier attempt started for this amount.
func reusable(ps []OrderPayment, amount int64) (string, bool) {
	for _, p := range ps {
		if p.Amount != amount && p.Amount != 0 {
			continue
		}
		switch p.Status {
		case StatusNew, StatusFormShowed, StatusConfirmed, StatusAsyncRefunding, StatusRefunded, StatusPartialRefunded:
			return string(p.PaymentId), true
		}
	}
	return "", false
}

// IsTransport reports whether err leaves a call's outcome unknown.
func IsTransport(err error) bool { return errors.Is(err, ErrTransport) }
