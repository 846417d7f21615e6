package tbank

import (
	"errors"
	"fmt"
)

// ErrBadToken marks a request or notification whose Token does not match the
// terminal's password over its root scalar fields.
var ErrBadToken = errors.New("tbank: bad token")

// ErrTransport marks a call whose outcome is unknown: the request may or may
// not have reached the bank (timeout, connection error, 5xx, unreadable
// answer). After one on Init, look the payment up with CheckOrder before
// calling Init again.
var ErrTransport = errors.New("tbank: no answer from the acquirer")

// Error codes the bank documents and tix relies on.
const (
	CodeOK = "0"
	// CodeBadToken: "Неверный токен. Проверьте пару TerminalKey/SecretKey."
	CodeBadToken = "204"
	// CodeTerminalNotFound: the TerminalKey is unknown.
	CodeTerminalNotFound = "501"
	// CodeInvalidParams: the generic "Неверные параметры." refusal.
	CodeInvalidParams = "9999"
)

// Error is the bank's refusal: an answer with Success false or a non-zero
// ErrorCode. The request reached the bank and was not carried out.
type Error struct {
	Method  string
	Code    string
	Message string
	Details string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("tbank %s: error %s: %s", e.Method, e.Code, e.Message)
	if e.Details != "" {
		s += " (" + e.Details + ")"
	}
	return s
}

// IsCode reports whether err is the bank's refusal with the given ErrorCode.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
