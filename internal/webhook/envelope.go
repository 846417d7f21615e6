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

// orderEnvelope is the envelope of an outbox event. It is built from the
// stored, immutable event, so every attempt sends the same bytes and id.
func orderEnvelope(ev *ticketing.OrderEvent) ([]byte, error) {
	var data any = OrderData{Order: ev.Order, Transfer: ev.Transfer}
	if ev.CheckIn != nil {
		data = CheckInData{CheckIn: *ev.CheckIn}
	}
	return json.Marshal(Envelope{
		ID: ev.ID, Type: ev.Type, APIVersion: APIVersion, CreatedAt: clock.Format(ev.CreatedAt),
		Data: data, Livemode: ev.Environment == ticketing.EnvLive,
	})
}
