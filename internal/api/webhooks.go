package api

import (
	"net/http"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The webhooks group (contract section 4): endpoints are managed in the
// dashboard (tixctl); the API lists them, the deliveries, and redelivers.

type webhookEndpointJSON struct {
	ID                  string   `json:"id"`
	URL                 string   `json:"url"`
	Status              string   `json:"status"`
	EnabledEvents       []string `json:"enabled_events"`
	Description         *string  `json:"description"`
	ConsecutiveFailures int      `json:"consecutive_failures"`
	LastDeliveryAt      *string  `json:"last_delivery_at"`
	CreatedAt           string   `json:"created_at"`
}

type webhookDeliveryJSON struct {
	ID             string  `json:"id"`
	EndpointID     string  `json:"endpoint_id"`
	EventType      string  `json:"event_type"`
	OrderID        *string `json:"order_id"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	MaxAttempts    int     `json:"max_attempts"`
	LastStatusCode *int    `json:"last_status_code"`
	LastError      *string `json:"last_error"`
	NextAttemptAt  string  `json:"next_attempt_at"`
	DeliveredAt    *string `json:"delivered_at"`
	FailedAt       *string `json:"failed_at"`
	CreatedAt      string  `json:"created_at"`
}

func renderEndpoint(e *webhook.Endpoint) webhookEndpointJSON {
	events := e.EnabledEvents
	if events == nil {
		events = []string{}
	}
	return webhookEndpointJSON{
		ID: e.ID, URL: e.URL, Status: string(e.Status), EnabledEvents: events, Description: e.Description,
		ConsecutiveFailures: e.ConsecutiveFailures, LastDeliveryAt: tsPtr(e.LastDeliveryAt), CreatedAt: ts(e.CreatedAt),
	}
}

func renderDelivery(d *webhook.Delivery) webhookDeliveryJSON {
	return webhookDeliveryJSON{
		ID: d.ID, EndpointID: d.EndpointID, EventType: d.EventType, OrderID: d.OrderID, Status: string(d.Status),
		Attempts: d.Attempts, MaxAttempts: d.MaxAttempts, LastStatusCode: d.LastStatusCode, LastError: d.LastError,
		NextAttemptAt: ts(d.NextAttemptAt), DeliveredAt: tsPtr(d.DeliveredAt), FailedAt: tsPtr(d.FailedAt), CreatedAt: ts(d.CreatedAt),
	}
}

func (s *Server) listWebhookEndpoints(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r.Context())
	eps, err := s.Webhooks.Endpoints(r.Context(), c.key.OrganizerID, c.key.Environment)
	if err != nil {
		return err
	}
	out := listJSON[webhookEndpointJSON]{Data: []webhookEndpointJSON{}}
	for _, e := range eps {
		out.Data = append(out.Data, renderEndpoint(e))
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r.Context())
	q := queryOf(r)
	dq := webhook.DeliveryQuery{OrganizerID: c.key.OrganizerID, Environment: c.key.Environment,
		Cursor: q.str("cursor"), EndpointID: q.str("endpoint_id")}
	var err error
	if dq.Limit, err = q.limit(); err != nil {
		return err
	}
	status, err := q.enum("status", "", "pending", "delivered", "failed", "skipped")
	if err != nil {
		return err
	}
	dq.Status = webhook.DeliveryStatus(status)
	page, err := s.Webhooks.Deliveries(r.Context(), dq)
	if err != nil {
		return err
	}
	out := pageJSON[webhookDeliveryJSON]{Data: []webhookDeliveryJSON{}, NextCursor: strPtr(page.NextCursor), HasMore: page.HasMore}
	for _, d := range page.Deliveries {
		out.Data = append(out.Data, renderDelivery(d))
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

// listOrderEvents is the event log: the envelopes the order webhooks carry, newest first.
func (s *Server) listOrderEvents(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r.Context())
	q := queryOf(r)
	eq := webhook.EventQuery{OrganizerID: c.key.OrganizerID, Environment: c.key.Environment,
		Cursor: q.str("cursor"), OrderID: q.str("order_id")}
	var err error
	if eq.Limit, err = q.limit(); err != nil {
		return err
	}
	if eq.Type, err = q.enum("type", "", append([]string{ticketing.EventOrderPaid, ticketing.EventOrderCancelled, ticketing.EventOrderRefunded}, webhook.OptInEventTypes...)...); err != nil {
		return err
	}
	after, err := q.time("created_after")
	if err != nil {
		return err
	}
	if after != nil {
		eq.CreatedAfter = *after
	}
	page, err := s.Webhooks.Events(r.Context(), eq)
	if err != nil {
		return err
	}
	out := pageJSON[webhook.Envelope]{Data: []webhook.Envelope{}, NextCursor: strPtr(page.NextCursor), HasMore: page.HasMore}
	for _, ev := range page.Events {
		out.Data = append(out.Data, webhook.EventEnvelope(ev))
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) redeliverWebhook(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r.Context())
	if err := decodeOptionalJSON(r, &struct{}{}); err != nil {
		return err
	}
	d, err := s.Webhooks.Redeliver(r.Context(), c.key.OrganizerID, c.key.Environment, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderDelivery(d))
	return nil
}
