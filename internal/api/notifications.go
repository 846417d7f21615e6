package api

import (
	"errors"
	"io"
	"log/slog"
	"net/http"

	"tix/internal/ticketing"
)

// paymentNotification is POST /v1/payment-notifications/tbank: the bank tells
// of a payment's new state. It answers 200 with the body OK (what the bank
// waits for) only once the change is durably written; a notification that is
// not the bank's is a 403 and changes nothing; any other failure is a 500, so
// the bank sends it again.
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
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "OK")
	return nil
}
