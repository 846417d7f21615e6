package webhook

import (
	"encoding/json"

	"tix/internal/clock"
	"tix/internal/ticketing"
)

// Envelope is what every webhook POST carries (contract section 6).
type Envelope struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	APIVersion string `json:"api_version"`
	CreatedAt  string `json:"created_at"` // clock.Format: the one timestamp format
	Data       any    `json:"data"`
	Livemode   bool   `json:"livemode"`
}

// OrderData is data of the order events: the order without buyer PII.
type OrderData struct {
	Order ticketing.WebhookOrder `json:"order"`
	// Transfer is ticket.transferred's: the accepted transfer (Order is
	// the new, transferred-in order).
	Transfer *ticketing.WebhookTransfer `json:"transfer,omitempty"`
}

// CheckInData is data of a ticket.checked_in event: the admission.
type CheckInData struct {
	CheckIn ticketing.WebhookCheckIn `json:"check_in"`
}

// EventEnvelope is the envelope the webhooks of ev carry (the event log's items).
func EventEnvelope(ev *ticketing.OrderEvent) Envelope {
	return Envelope{
		ID: ev.ID, Type: ev.Type, APIVersion: APIVersion, CreatedAt: clock.Format(ev.CreatedAt),
		Data: eventData(ev), Livemode: ev.Environment == ticketing.EnvLive,
	}
}

// eventData is the data of ev's envelope: the admission for
// ticket.checked_in, the order (and an accepted transfer) otherwise.
func eventData(ev *ticketing.OrderEvent) any {
	if ev.CheckIn != nil {
		return CheckInData{CheckIn: *ev.CheckIn}
	}
	return OrderData{Order: ev.Order, Transfer: ev.Transfer}
}

// orderEnvelope is the envelope of an outbox event. It is built from the
// stored, immutable event, so every attempt sends the same bytes and id.
func orderEnvelope(ev *ticketing.OrderEvent) ([]byte, error) {
	return json.Marshal(EventEnvelope(ev))
}
