package ticketing

import (
	"context"
	"crypto/sha256"
	"log/slog"

	"tix/internal/clock"
)

// CheckInWebhooks is what the door needs of webhook delivery for the
// optional ticket.checked_in event: whether the tenant has an endpoint that
// subscribes to it (cached by the implementation), and the hand-off of a
// written event.
type CheckInWebhooks interface {
	Subscribed(ctx context.Context, t Tenant, eventType string) (bool, error)
	EventPublisher
}

// announce writes and publishes a ticket.checked_in event for an admission
// this scan made, when an endpoint of the tenant subscribes to it. The
// admission stays one write: the event is written after it, under an id
// derived from the check-in's (written once however often it is tried), so
// it is lost only if the process stops between the two writes. A failure
// is logged, never the scan's.
func (s *CheckIns) announce(ctx context.Context, t Tenant, st TicketState, ci *CheckIn) {
	if s.Webhooks == nil || ci == nil {
		return
	}
	want, err := s.Webhooks.Subscribed(ctx, t, EventTicketCheckedIn)
	if err == nil && want {
		ev := &OrderEvent{ID: checkInEventID(ci.ID), Type: EventTicketCheckedIn, OrganizerID: t.OrganizerID, Environment: t.Environment,
			CreatedAt: s.Clock.Now().UTC(), CheckIn: &WebhookCheckIn{ID: ci.ID, TicketNumber: ci.TicketNumber, OrderID: st.OrderID,
				EventID: st.EventID, OccurrenceID: optional(st.OccurrenceID), Gate: ci.Gate, At: clock.Format(ci.At)}}
		if err = s.Store.PutCheckInEvent(ctx, ev); err == nil {
			s.Webhooks.Publish(ctx, ev.ID)
		}
	}
	if err != nil {
		slog.WarnContext(ctx, "ticket.checked_in event not written", "check_in", ci.ID, "error", err)
	}
}

// checkInEventID is the event id of a check-in: evt_ and 24 characters of
// a hash of its id.
func checkInEventID(checkInID string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	sum := sha256.Sum256([]byte("ticket.checked_in\x00" + checkInID))
	b := make([]byte, 24)
	for i := range b {
		b[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return "evt_" + string(b)
}
