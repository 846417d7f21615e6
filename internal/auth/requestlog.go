package auth

import (
	"time"

	"tix/internal/ticketing"
)

// RequestLogKeep is how long the request log keeps a request (GET
// /request-log/{request_id}): 7 days.
const RequestLogKeep = 7 * 24 * time.Hour

// RequestRecord is what the request log keeps of one request authenticated
// with an organizer's key: no body, no query string, no client address and
// nothing personal; the path is the route's template (/v1/orders/{id}).
type RequestRecord struct {
	RequestID   string                `json:"request_id"`
	OrganizerID string                `json:"organizer_id"`
	Environment ticketing.Environment `json:"environment"`
	KeyID       string                `json:"key_id"`
	Method      string                `json:"method"`
	Path        string                `json:"path"`
	Status      int                   `json:"status"`
	ErrorCode   string                `json:"error_code,omitempty"`
	CreatedAt   time.Time             `json:"created_at"`
}
