package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"tix/internal/ticketing"
)

// statusOf maps the contract's codes to HTTP statuses: the one place that does.
var statusOf = map[ticketing.Code]int{
	ticketing.CodeInvalidRequest:       http.StatusBadRequest,
	ticketing.CodeUnauthorized:         http.StatusUnauthorized,
	ticketing.CodeForbidden:            http.StatusForbidden,
	ticketing.CodeInsufficientScope:    http.StatusForbidden,
	ticketing.CodeIPNotAllowed:         http.StatusForbidden,
	ticketing.CodeOriginNotAllowed:     http.StatusForbidden,
	ticketing.CodeAdmissionRequired:    http.StatusForbidden,
	ticketing.CodeNotFound:             http.StatusNotFound,
	ticketing.CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	ticketing.CodeConflict:             http.StatusConflict,
	ticketing.CodeOrderCancelled:       http.StatusConflict,
	ticketing.CodeOrderPending:         http.StatusConflict,
	ticketing.CodeSeatConflict:         http.StatusConflict,
	ticketing.CodeSalesClosed:          http.StatusGone,
	ticketing.CodeHoldExpired:          http.StatusGone,
	ticketing.CodeUnsupported:          http.StatusUnprocessableEntity,
	ticketing.CodeRateLimited:          http.StatusTooManyRequests,
	ticketing.CodeInternal:             http.StatusInternalServerError,
	ticketing.CodePaymentProviderError: http.StatusBadGateway,
}

// errorDocs says what each code means and what to do next: /v1/docs/errors
// renders one section per code, the section every error's doc_url names.
var errorDocs = map[ticketing.Code]string{
	ticketing.CodeInvalidRequest:       "The request is malformed: JSON, a field's type, a missing or forbidden field, a query parameter or a cursor. param names the field; fix it and send the request again.",
	ticketing.CodeUnauthorized:         "No usable key (missing, malformed, unknown, revoked or expired), or a wrong poll token. Send Authorization: Bearer with a valid key.",
	ticketing.CodeForbidden:            "A publishable key called an operation only secret keys may call. Call it from your server with an sk_ key.",
	ticketing.CodeInsufficientScope:    "The key lacks the scope the operation needs (param: scope). Use a key that holds it, or create one.",
	ticketing.CodeIPNotAllowed:         "The secret key is not allowed from this address. Add the address to the key's allow-list or call from an allowed one.",
	ticketing.CodeOriginNotAllowed:     "The publishable key is not allowed from this Origin. Add the origin to the key's allow-list.",
	ticketing.CodeNotFound:             "No such object for this key: missing, another organizer's, or in the other environment (the message says so for orders). Check the id and the key's mode.",
	ticketing.CodeMethodNotAllowed:     "The path exists but not with this method; Allow lists the methods it takes.",
	ticketing.CodeConflict:             "The request conflicts with the object's current state or with a request in flight. Read the object again and decide.",
	ticketing.CodeOrderCancelled:       "The order of this Idempotency-Key was cancelled. Start a new order with a new key.",
	ticketing.CodeOrderPending:         "The order of this Idempotency-Key is still being prepared. Retry after Retry-After with the same key.",
	ticketing.CodeSeatConflict:         "A requested seat is no longer available. Let the buyer pick other seats.",
	ticketing.CodeSalesClosed:          "Sales are not open for this event (not started, ended or unavailable).",
	ticketing.CodeHoldExpired:          "The seat hold has expired. Hold the seats again.",
	ticketing.CodeUnsupported:          "The request is well formed but Tix does not do it: free tickets, a method other than SBP, several events in one order, a test helper without an sk_test key, a refund it cannot make, a seating map too large for one response (send Accept-Encoding: gzip, or read it one zone at a time with zone_id: the message says which).",
	ticketing.CodeRateLimited:          "Over a request budget. Wait for Retry-After; X-RateLimit-* show the budget.",
	ticketing.CodeInternal:             "An unexpected error. Reads are safe to retry; retry writes with the same Idempotency-Key. Quote the Tix-Request-Id to support.",
	ticketing.CodePaymentProviderError: "The payment provider could not create the charge. Retry with the same Idempotency-Key.",
}

// docURL is the section of /v1/docs/errors about code, on the API's own host.
func docURL(code ticketing.Code) string { return "/v1/docs/errors#" + string(code) }

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    ticketing.Code `json:"code"`
	Message string         `json:"message"`
	Param   string         `json:"param,omitempty"`
	DocURL  string         `json:"doc_url"`
}

// writeError answers with the contract's envelope. Anything that is not a
// *ticketing.Error is an internal error: logged (the logger adds the request
// id from the context), and the client sees only a generic message and that id.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *ticketing.Error
	if !errors.As(err, &e) {
		e = &ticketing.Error{Code: ticketing.CodeInternal, Err: err}
	}
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	noteError(w, string(e.Code))
	msg := e.Message
	if status >= 500 {
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "code", e.Code, "error", err)
		if e.Code == ticketing.CodeInternal || msg == "" {
			msg = "An unexpected error occurred. Reads are safe to retry; retry writes with the same Idempotency-Key. Quote request id " + requestID(r.Context()) + " to support."
		}
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	writeJSON(w, status, errorBody{Error: errorDetail{Code: e.Code, Message: msg, Param: e.Param, DocURL: docURL(e.Code)}})
}

// writeJSON writes v as the JSON response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode response", "error", err)
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal_error","message":"could not encode the response","doc_url":"/v1/docs/errors#internal_error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
