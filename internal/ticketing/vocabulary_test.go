package ticketing_test

import (
	"errors"
	"fmt"
	"testing"

	"tix/internal/emailjobs"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// One vocabulary for "not found" and "state changed" across the store ports
// of ticketing, webhook and emailjobs: a caller tests errors.Is against
// ticketing's sentinels whichever port answered, and a not_found *Error is
// ErrNotFound too.
func TestOneVocabularyForNotFoundAndStateChanged(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		target error
	}{
		{"webhook not found", webhook.ErrNotFound, ticketing.ErrNotFound},
		{"email not found", emailjobs.ErrNotFound, ticketing.ErrNotFound},
		{"not_found error", ticketing.NotFound("order"), ticketing.ErrNotFound},
		{"wrapped not_found error", fmt.Errorf("read: %w", ticketing.NotFound("event")), ticketing.ErrNotFound},
		{"webhook state changed", webhook.ErrStateChanged, ticketing.ErrStateChanged},
		{"email state changed", emailjobs.ErrStateChanged, ticketing.ErrStateChanged},
	} {
		if !errors.Is(c.err, c.target) {
			t.Errorf("%s: errors.Is(%v, %v) is false", c.name, c.err, c.target)
		}
	}
	if errors.Is(ticketing.Invalid("quantity", "too many"), ticketing.ErrNotFound) {
		t.Error("an invalid_request error is ErrNotFound")
	}
	if errors.Is(ticketing.ErrStateChanged, ticketing.ErrNotFound) || errors.Is(ticketing.ErrNotFound, ticketing.ErrStateChanged) {
		t.Error("not found and state changed are one error")
	}
}
