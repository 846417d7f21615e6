package api

import (
	"errors"
	"io"
	"log/slog"
	"net/http"

	"tix/internal/ticketing"
)

// paymentNotification is POST /v1/payment-notifications/tbank: the bank tells
// that a payment changed, and tix asks the bank for its state. It answers 200
// with the body OK (what the bank waits for) only once what follows from that
// state is durably written; a notification that is not the bank's (unknown
// terminal, no or a wrong Token) is a 403 and changes nothing; one whose Token
// verifies but whose body is malformed changes nothing and is answered OK, so
// that the bank stops sending it (reconciliation asks the bank itself); any
// other failure is a 500, so the bank sends it again.
func (s *Server) paymentNotification(w http.ResponseWriter, r *http.Request) error {
	if s.PaymentNotification == nil {
		return ticketing.NotFound("payment notifications endpoint")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return ticketing.Invalid("body", "the notification body could not be read: %v", err)
	}
	err = s.PaymentNotification(r.Context(), body)
	if errors.Is(err, ticketing.ErrForgedNotification) {
		slog.WarnContext(r.Context(), "payment notification refused", "error", err)
		return &ticketing.Error{Code: ticketing.CodeForbidden, Message: "the notification's Token does not verify under its terminal's password"}
	}
	if errors.Is(err, ticketing.ErrMalformedNotification) {
		slog.ErrorContext(r.Context(), "signed payment notification refused as malformed: acknowledged, nothing changed", "error", err)
		err = nil
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "OK")
	return nil
}
