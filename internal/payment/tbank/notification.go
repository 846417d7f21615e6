package tbank

import (
	"encoding/json"
	"fmt"
)

// NotificationOK is the exact body the bank waits for; any other answer, or
// any status but 200, makes it send the notification again.
const NotificationOK = "OK"

// Notification is the part of the bank's notification tix reads. The bank
// sends more fields than these and adds new ones; all of them are covered by
// the Token, which ParseNotification checks over the body as received.
type Notification struct {
	TerminalKey string `json:"TerminalKey"`
	OrderId     string `json:"OrderId"`
	Success     Flag   `json:"Success"`
	Status      string `json:"Status"`
	PaymentId   Text   `json:"PaymentId"`
	ErrorCode   Text   `json:"ErrorCode"`
	Amount      int64  `json:"Amount"`
}

// NotificationTerminal reads the TerminalKey of an unverified notification,
// so the receiver can find the terminal's password to verify it with.
func NotificationTerminal(body []byte) (string, error) {
	var n struct {
		TerminalKey string `json:"TerminalKey"`
	}
	if err := json.Unmarshal(body, &n); err != nil || n.TerminalKey == "" {
		return "", fmt.Errorf("%w: notification without TerminalKey", ErrBadToken)
	}
	return n.TerminalKey, nil
}

// ParseNotification verifies body's Token under password over every root
// scalar field received, then decodes it. A notification that fails the
// check (ErrBadToken) must change nothing.
func ParseNotification(body []byte, password string) (Notification, error) {
	if err := CheckToken(body, password); err != nil {
		return Notification{}, err
	}
	var n Notification
	if err := json.Unmarshal(body, &n); err != nil {
		return Notification{}, fmt.Errorf("%w: %v", ErrBadToken, err)
	}
	return n, nil
}

// SignNotification signs a notification body the way the bank does; the
// simulator and tests use it.
func SignNotification(body []byte, password string) ([]byte, error) {
	return sign(body, password)
}
