package tbank

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"tix/internal/jsonkeys"
)

// NotificationOK is the exact body the bank waits for; any other answer, or
// any status but 200, makes it send the notification again.
const NotificationOK = "OK"

// ErrMalformedNotification marks a notification whose Token verifies but
// whose body is not one the bank sends: a member named twice (exactly or in
// another letter case), a member named in another letter case than the
// bank's, an Amount that is not a JSON integer, or TerminalKey, OrderId,
// PaymentId or Status missing or empty. Since the Token covers only values
// concatenated without separators, a captured notification can be rewritten
// this way without breaking it: such a body must change nothing.
var ErrMalformedNotification = errors.New("tbank: malformed notification")

// Notification is the part of the bank's notification tix reads. The bank
// sends more fields than these and adds new ones; all of them are covered by
// the Token, which ParseNotification checks over the body as received. Only
// TerminalKey, OrderId and PaymentId are acted on, and only to know which
// payment to ask the bank about (GetState): Status and Amount are what the
// notification claims, never what money decisions are taken from.
type Notification struct {
	TerminalKey string
	OrderId     string
	PaymentId   string
	Status      string
	Amount      int64
	Success     Flag
}

// known are the member names tix reads; another letter case of one of them
// is refused, so that no decoder can read it in place of the bank's own.
var known = []string{"TerminalKey", "OrderId", "PaymentId", "Status", "Amount", "Success", "ErrorCode", "Token"}

// NotificationTerminal reads the TerminalKey of an unverified notification,
// so the receiver can find the terminal's password to verify it with. Only
// the exact member name counts.
func NotificationTerminal(body []byte) (string, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(body, &root); err != nil {
		return "", fmt.Errorf("%w: notification is not a JSON object", ErrBadToken)
	}
	var key string
	if raw, ok := root["TerminalKey"]; !ok || json.Unmarshal(raw, &key) != nil || key == "" {
		return "", fmt.Errorf("%w: notification without TerminalKey", ErrBadToken)
	}
	return key, nil
}

// ParseNotification verifies body's Token under password over every root
// scalar field received (ErrBadToken when it fails), then reads it strictly
// (ErrMalformedNotification). A notification refused either way must change
// nothing.
func ParseNotification(body []byte, password string) (Notification, error) {
	if err := CheckToken(body, password); err != nil {
		return Notification{}, err
	}
	n, err := strictNotification(body)
	if err != nil {
		return Notification{}, fmt.Errorf("%w: %v", ErrMalformedNotification, err)
	}
	return n, nil
}

// strictNotification reads the members tix needs by their exact names.
func strictNotification(body []byte) (Notification, error) {
	if err := jsonkeys.Check(body); err != nil {
		return Notification{}, err
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(body, &root); err != nil {
		return Notification{}, err
	}
	for name := range root {
		for _, k := range known {
			if name != k && strings.EqualFold(name, k) {
				return Notification{}, fmt.Errorf("member %q is not the bank's %q", name, k)
			}
		}
	}
	var n Notification
	var err error
	for _, f := range []struct {
		name string
		to   *string
	}{{"TerminalKey", &n.TerminalKey}, {"OrderId", &n.OrderId}, {"Status", &n.Status}} {
		if *f.to, err = text(root, f.name, false); err != nil {
			return Notification{}, err
		}
	}
	if n.PaymentId, err = text(root, "PaymentId", true); err != nil {
		return Notification{}, err
	}
	if raw, ok := root["Success"]; ok {
		if err := n.Success.UnmarshalJSON(raw); err != nil {
			return Notification{}, fmt.Errorf("member Success: %v", err)
		}
	}
	n.Amount, err = integer(root, "Amount")
	return n, err
}

// text is a member that must be a non-empty JSON string (or, with number, a
// JSON integer: the bank sends PaymentId as a number).
func text(root map[string]json.RawMessage, name string, number bool) (string, error) {
	raw, ok := root[name]
	if !ok {
		return "", fmt.Errorf("no %s", name)
	}
	raw = bytes.TrimSpace(raw)
	var s string
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("%s: %v", name, err)
		}
	case number && isInteger(raw):
		s = string(raw)
	default:
		return "", fmt.Errorf("%s is %s, not a string", name, raw)
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%s is empty", name)
	}
	return s, nil
}

// integer is a member that must be a JSON integer.
func integer(root map[string]json.RawMessage, name string) (int64, error) {
	raw, ok := root[name]
	if !ok {
		return 0, fmt.Errorf("no %s", name)
	}
	raw = bytes.TrimSpace(raw)
	var v int64
	if !isInteger(raw) || json.Unmarshal(raw, &v) != nil {
		return 0, fmt.Errorf("%s is %s, not an integer", name, raw)
	}
	return v, nil
}

// isInteger reports whether raw is a JSON integer: digits, with an optional
// leading minus, no fraction or exponent.
func isInteger(raw []byte) bool {
	s := strings.TrimPrefix(string(raw), "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// SignNotification signs a notification body the way the bank does; the
// simulator and tests use it.
func SignNotification(body []byte, password string) ([]byte, error) {
	return sign(body, password)
}
