// Package ticketing is the domain of tix: catalog, sales windows, holds, orders.
// It imports neither AWS nor net/http; adapters implement the ports it declares.
package ticketing

import (
	"errors"
	"fmt"
	"time"
)

// Code is one of the contract's error codes (section 7).
type Code string

// The contract's error codes.
const (
	CodeInvalidRequest       Code = "invalid_request"
	CodeUnauthorized         Code = "unauthorized"
	CodeForbidden            Code = "forbidden"
	CodeInsufficientScope    Code = "insufficient_scope"
	CodeIPNotAllowed         Code = "ip_not_allowed"
	CodeOriginNotAllowed     Code = "origin_not_allowed"
	CodeNotFound             Code = "not_found"
	CodeMethodNotAllowed     Code = "method_not_allowed"
	CodeConflict             Code = "conflict"
	CodeOrderCancelled       Code = "order_cancelled"
	CodeOrderPending         Code = "order_pending"
	CodeSeatConflict         Code = "seat_conflict"
	CodeSalesClosed          Code = "sales_closed"
	CodeUnsupported          Code = "unsupported"
	CodeRateLimited          Code = "rate_limited"
	CodeInternal             Code = "internal_error"
	CodePaymentProviderError Code = "payment_provider_error"
	// CodeAdmissionRequired: a publishable-key hold or order of an on-sale
	// with a waiting room without a valid, unspent admission (docs/waiting-room.md).
	CodeAdmissionRequired Code = "admission_required"
)

// Error is the one error type that travels from the domain and the store to the
// HTTP layer, where a single function maps Code to a status and an envelope.
type Error struct {
	Code    Code
	Message string
	Param   string
	// RetryAfter, when set, becomes the Retry-After header (429, 409 order_pending).
	RetryAfter time.Duration
	// Err is the underlying cause; logged, never shown to the client.
	Err error
}

func (e *Error) Error() string {
	s := string(e.Code) + ": " + e.Message
	if e.Param != "" {
		s += " (param " + e.Param + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes a not_found error ErrNotFound (errors.Is).
func (e *Error) Is(target error) bool { return target == ErrNotFound && e.Code == CodeNotFound }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid is a 400 invalid_request naming the offending field.
func Invalid(param, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf(format, args...), Param: param}
}

// NotFound is the answer for a missing resource and for another tenant's resource alike.
func NotFound(what string) *Error {
	return &Error{Code: CodeNotFound, Message: what + " not found"}
}

// ErrorCode returns the contract code of err, or internal_error for anything else.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// isNotFound reports whether err is a not_found *Error: what the store answers
// for a missing item.
func isNotFound(err error) bool { return IsCode(err, CodeNotFound) }

// IsCode reports whether err is an *Error with the given code.
func IsCode(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// ErrForgedNotification: a payment notification whose signature does not
// verify (or that names no known terminal). It changes nothing.
var ErrForgedNotification = errors.New("payment notification is not authentic")

// ErrMalformedNotification: a payment notification whose signature verifies
// but whose body is not one the acquirer sends (a member named twice or in
// another letter case, a non-integer amount, a required member missing). It
// changes nothing.
var ErrMalformedNotification = errors.New("payment notification is malformed")

// ErrUnknownPayment: the acquirer does not know the payment asked about (it
// refused the question rather than leaving it unanswered).
var ErrUnknownPayment = errors.New("the acquirer does not know this payment")
