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

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    ticketing.Code `json:"code"`
	Message string         `json:"message"`
	Param   string         `json:"param,omitempty"`
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
	writeJSON(w, status, errorBody{Error: errorDetail{Code: e.Code, Message: msg, Param: e.Param}})
}

// writeJSON writes v as the JSON response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode response", "error", err)
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal_error","message":"could not encode the response"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
