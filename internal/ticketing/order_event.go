package ticketing

import (
	"encoding/json"
	"time"

	"tix/internal/clock"
)

// WebhookOrder is the order as webhooks carry it (contract section 2): no PII.
type WebhookOrder struct {
	ID               string     `json:"id"`
	Type             string     `json:"type"`
	Status           string     `json:"status"`
	IsPaid           bool       `json:"is_paid"`
	Livemode         bool       `json:"livemode"`
	Currency         string     `json:"currency"`
	BasePrice        int64      `json:"base_price"`
	ServiceFee       int64      `json:"service_fee"`
	TotalPrice       int64      `json:"total_price"`
	Quantity         int        `json:"quantity"`
	EventID          *string    `json:"event_id"`
	TicketTierID     *string    `json:"ticket_tier_id"`
	OccurrenceTierID *string    `json:"occurrence_tier_id"`
	PaidAt           *time.Time `json:"paid_at"`
	CreatedAt        time.Time  `json:"created_at"`
}

// MarshalJSON writes the order's timestamps in the one format tix sends
// (clock.Format), so data.order of a webhook says the same instant with the
// same string as GET /orders/{id}. Decoding takes any RFC 3339 time.
func (w WebhookOrder) MarshalJSON() ([]byte, error) {
	type plain WebhookOrder
	return json.Marshal(struct {
		plain
		PaidAt    *string `json:"paid_at"`
		CreatedAt string  `json:"created_at"`
	}{plain: plain(w), PaidAt: clock.FormatPtr(w.PaidAt), CreatedAt: clock.Format(w.CreatedAt)})
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Webhook is the order's WebhookOrder as of now.
func (o *Order) Webhook() WebhookOrder {
	return WebhookOrder{
		ID: o.ID, Type: o.Type, Status: string(o.Status), IsPaid: o.IsPaid(),
		Livemode: o.Environment == EnvLive, Currency: o.Currency,
		BasePrice: o.BasePrice, ServiceFee: o.ServiceFee, TotalPrice: o.TotalPrice,
		Quantity: o.Quantity, EventID: nonEmpty(o.EventID), TicketTierID: nonEmpty(o.FirstTierID()),
		OccurrenceTierID: nonEmpty(o.OccurrenceTierID()), PaidAt: o.PaidAt, CreatedAt: o.CreatedAt,
	}
}

// Webhook event types (contract section 6).
const (
	EventOrderPaid      = "order.paid"
	EventOrderCancelled = "order.cancelled"
	EventOrderRefunded  = "order.refunded"
)

// OrderEvent is the outbox record an order state change writes in the same
// transaction as the change (a transactional outbox). Its ID is the webhook envelope's id,
// stable across every delivery attempt.
type OrderEvent struct {
	ID          string       `json:"id"` // evt_...
	Type        string       `json:"type"`
	OrganizerID string       `json:"organizer_id"`
	Environment Environment  `json:"environment"`
	CreatedAt   time.Time    `json:"created_at"`
	Order       WebhookOrder `json:"order"`
	// Transfer is ticket.transferred's transfer (Order is then the new,
	// transferred-in order).
	Transfer *WebhookTransfer `json:"transfer,omitempty"`
}

func newEvent(typ string, o *Order, now time.Time) *OrderEvent {
	return &OrderEvent{ID: newID("evt_", 24), Type: typ, OrganizerID: o.OrganizerID,
		Environment: o.Environment, CreatedAt: now, Order: o.Webhook()}
}
