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
	// Version grows with every change of the order (the stored revision that
	// every write checks and bumps in the same conditional write): of two
	// states of one order, the one with the greater version is the newer.
	Version int64 `json:"version"`
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
		Version: o.Version,
	}
}

// Webhook event types (contract section 6).
const (
	EventOrderPaid      = "order.paid"
	EventOrderCancelled = "order.cancelled"
	EventOrderRefunded  = "order.refunded"
	// EventTicketCheckedIn is sent only to endpoints that subscribe to it by
	// name (docs/webhooks.md): a ticket was admitted at the door.
	EventTicketCheckedIn = "ticket.checked_in"
)

// WebhookCheckIn is data.check_in of a ticket.checked_in event: the
// admission, its ticket, order, event and occurrence, and nothing personal.
type WebhookCheckIn struct {
	ID           string  `json:"id"`
	TicketNumber string  `json:"ticket_number"`
	OrderID      string  `json:"order_id"`
	EventID      string  `json:"event_id"`
	OccurrenceID *string `json:"occurrence_id"`
	Gate         string  `json:"gate"`
	At           string  `json:"at"` // clock.Format
}

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
	// CheckIn is a ticket.checked_in event's admission (Order is then empty).
	CheckIn *WebhookCheckIn `json:"check_in,omitempty"`
	// Transfer is ticket.transferred's transfer (Order is then the new,
	// transferred-in order).
	Transfer *WebhookTransfer `json:"transfer,omitempty"`
}

// newEvent is the event of the change from o (as read, at o.Version) to the
// state it describes: the store writes both in one transaction conditional on
// o.Version and bumps the version by one, so the event carries o.Version+1,
// the version GET /orders/{id} shows once the change is written.
func newEvent(typ string, o *Order, now time.Time) *OrderEvent {
	w := o.Webhook()
	w.Version = o.Version + 1
	return &OrderEvent{ID: newID("evt_", 24), Type: typ, OrganizerID: o.OrganizerID,
		Environment: o.Environment, CreatedAt: now, Order: w}
}
