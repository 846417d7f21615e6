package tbank

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Text is a wire value the bank sends sometimes as a JSON string and
// sometimes as a number (PaymentId is a string in Init's answer and a number
// in GetQr's and in notifications; ErrorCode varies the same way).
type Text string

// UnmarshalJSON accepts a string, a number or a boolean.
func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Text(s)
		return nil
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	if _, err := strconv.ParseFloat(string(b), 64); err != nil && string(b) != "true" && string(b) != "false" {
		return fmt.Errorf("tbank: %s is neither a string nor a number", b)
	}
	*t = Text(b)
	return nil
}

// Flag is a boolean the bank sometimes sends as "true"/"false" strings.
type Flag bool

// UnmarshalJSON accepts true, false, "true" and "false".
func (f *Flag) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true", `"true"`:
		*f = true
	case "false", `"false"`, "null":
		*f = false
	default:
		return fmt.Errorf("tbank: %s is not a boolean", b)
	}
	return nil
}

// Answer is the envelope of every answer.
type Answer struct {
	Success   Flag   `json:"Success"`
	ErrorCode Text   `json:"ErrorCode"`
	Message   string `json:"Message,omitempty"`
	Details   string `json:"Details,omitempty"`
}

func (a Answer) envelope() Answer { return a }

// Payment statuses an SBP payment goes through.
const (
	StatusNew             = "NEW"
	StatusFormShowed      = "FORM_SHOWED"
	StatusConfirmed       = "CONFIRMED"
	StatusRejected        = "REJECTED"
	StatusDeadlineExpired = "DEADLINE_EXPIRED"
	StatusCanceled        = "CANCELED"
	StatusAsyncRefunding  = "ASYNC_REFUNDING"
	StatusPartialRefunded = "PARTIAL_REFUNDED"
	StatusRefunded        = "REFUNDED"
)

// DueDateLayout is RedirectDueDate's format: local time with its UTC offset,
// whole seconds (2016-08-31T12:28:00+03:00).
const DueDateLayout = "2006-01-02T15:04:05Z07:00"

// moscow is the bank's zone; a fixed offset needs no zone database.
var moscow = time.FixedZone("MSK", 3*60*60)

// DueDate renders t as a RedirectDueDate in Moscow time.
func DueDate(t time.Time) string { return t.In(moscow).Format(DueDateLayout) }

// InitRequest starts a payment session. Amount is in kopecks. OrderId is
// ours and not unique at the bank: CheckOrder lists every payment under it.
type InitRequest struct {
	Amount          int64             `json:"Amount"`
	OrderId         string            `json:"OrderId"`
	Description     string            `json:"Description,omitempty"`
	NotificationURL string            `json:"NotificationURL,omitempty"`
	RedirectDueDate string            `json:"RedirectDueDate,omitempty"`
	PayType         string            `json:"PayType,omitempty"`
	Receipt         *Receipt          `json:"Receipt,omitempty"`
	DATA            map[string]string `json:"DATA,omitempty"`
}

// InitAnswer is Init's answer.
type InitAnswer struct {
	Answer
	TerminalKey string `json:"TerminalKey"`
	Amount      int64  `json:"Amount"`
	OrderId     string `json:"OrderId"`
	Status      string `json:"Status"`
	PaymentId   Text   `json:"PaymentId"`
	PaymentURL  string `json:"PaymentURL,omitempty"`
}

// Receipt is the 54-FZ receipt the bank's online cash register issues.
// Amounts are in kopecks; Quantity is a decimal number.
type Receipt struct {
	Email      string        `json:"Email,omitempty"`
	Phone      string        `json:"Phone,omitempty"`
	Taxation   string        `json:"Taxation"`
	FfdVersion string        `json:"FfdVersion,omitempty"`
	Items      []ReceiptItem `json:"Items"`
}

// ReceiptItem is one line: Amount must equal Price × Quantity.
type ReceiptItem struct {
	Name          string  `json:"Name"`
	Price         int64   `json:"Price"`
	Quantity      float64 `json:"Quantity"`
	Amount        int64   `json:"Amount"`
	Tax           string  `json:"Tax"`
	PaymentMethod string  `json:"PaymentMethod,omitempty"`
	PaymentObject string  `json:"PaymentObject,omitempty"`
}

// GetQrRequest asks for the SBP QR of a payment; DataType PAYLOAD returns the
// https://qr.nspk.ru/... link in Data.
type GetQrRequest struct {
	PaymentId string `json:"PaymentId"`
	DataType  string `json:"DataType,omitempty"`
}

// GetQrAnswer is GetQr's answer.
type GetQrAnswer struct {
	Answer
	TerminalKey string `json:"TerminalKey"`
	OrderId     string `json:"OrderId"`
	PaymentId   Text   `json:"PaymentId"`
	Data        string `json:"Data"`
	RequestKey  string `json:"RequestKey,omitempty"`
}

// PaymentIDRequest names one payment (GetState).
type PaymentIDRequest struct {
	PaymentId string `json:"PaymentId"`
}

// StateAnswer is GetState's answer.
type StateAnswer struct {
	Answer
	TerminalKey string `json:"TerminalKey"`
	OrderId     string `json:"OrderId"`
	PaymentId   Text   `json:"PaymentId"`
	Status      string `json:"Status"`
	Amount      int64  `json:"Amount"`
}

// CancelRequest cancels a payment not yet paid, or refunds a confirmed one
// (SBP refunds are asynchronous: ASYNC_REFUNDING, then REFUNDED). Amount 0
// means the whole amount. QrMemberId names the payer's bank for an SBP refund
// when the bank asks for it.
type CancelRequest struct {
	PaymentId  string   `json:"PaymentId"`
	Amount     int64    `json:"Amount,omitempty"`
	QrMemberId string   `json:"QrMemberId,omitempty"`
	Receipt    *Receipt `json:"Receipt,omitempty"`
}

// CancelAnswer is Cancel's answer.
type CancelAnswer struct {
	Answer
	TerminalKey    string `json:"TerminalKey"`
	OrderId        string `json:"OrderId"`
	PaymentId      Text   `json:"PaymentId"`
	Status         string `json:"Status"`
	OriginalAmount int64  `json:"OriginalAmount"`
	NewAmount      int64  `json:"NewAmount"`
}

// SbpPayTestRequest forces a DEMO terminal's SBP payment outcome: paid by
// default, or rejected, or expired.
type SbpPayTestRequest struct {
	PaymentId         string `json:"PaymentId"`
	IsDeadlineExpired bool   `json:"IsDeadlineExpired,omitempty"`
	IsRejected        bool   `json:"IsRejected,omitempty"`
}

// ResendAnswer is Resend's answer: how many undelivered notifications the
// bank will send again.
type ResendAnswer struct {
	Answer
	TerminalKey string `json:"TerminalKey"`
	Count       int    `json:"Count"`
}

// CheckOrderRequest lists the payments made under one OrderId.
type CheckOrderRequest struct {
	OrderId string `json:"OrderId"`
}

// CheckOrderAnswer is CheckOrder's answer.
type CheckOrderAnswer struct {
	Answer
	TerminalKey string         `json:"TerminalKey"`
	OrderId     string         `json:"OrderId"`
	Payments    []OrderPayment `json:"Payments"`
}

// OrderPayment is one payment of an order in CheckOrder's answer.
type OrderPayment struct {
	PaymentId    Text   `json:"PaymentId"`
	Amount       int64  `json:"Amount"`
	Status       string `json:"Status"`
	RRN          string `json:"RRN,omitempty"`
	Success      Flag   `json:"Success"`
	ErrorCode    Text   `json:"ErrorCode"`
	Message      string `json:"Message,omitempty"`
	SbpPaymentId string `json:"SbpPaymentId,omitempty"`
}
