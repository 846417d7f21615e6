//go:build clientcheck

// This test is compiled next to the client oapi-codegen generates from
// internal/api/openapi.yaml (scripts/clientcheck.sh copies both into a temporary
// module): it proves that a Go integrator can build every request variant and
// read what the API and its webhooks send with the generated types.
package tixclient

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestGeneratedClientBuildsAndReads(t *testing.T) {
	c, err := NewClientWithResponses("http://127.0.0.1:8080/v1")
	if err != nil {
		t.Fatal(err)
	}
	var _ func(context.Context, *CreateOrderParams, CreateOrderJSONRequestBody, ...RequestEditorFn) (*CreateOrderResponse, error) = c.CreateOrderWithResponse

	// Each selection variant of OrderCreateRequest can be built.
	qty := 2
	buyer := Buyer{Email: "buyer@example.com"}
	var byTier, bySeats, byStanding OrderCreateRequest
	if err := byTier.FromOrderCreateTierRequest(OrderCreateTierRequest{Buyer: buyer, TierId: "tier_1", Quantity: &qty}); err != nil {
		t.Fatal(err)
	}
	if err := bySeats.FromOrderCreateSeatsRequest(OrderCreateSeatsRequest{Buyer: buyer, SeatReservationIds: []string{"rsv_1"}}); err != nil {
		t.Fatal(err)
	}
	if err := byStanding.FromOrderCreateStandingRequest(OrderCreateStandingRequest{Buyer: buyer, StandingItems: []StandingItem{{TierId: "tier_s", Qty: 1}}}); err != nil {
		t.Fatal(err)
	}
	for want, req := range map[string]OrderCreateRequest{`"tier_id":"tier_1"`: byTier, `"seat_reservation_ids":["rsv_1"]`: bySeats, `"standing_items":[{`: byStanding} {
		b, err := json.Marshal(req)
		if err != nil || !strings.Contains(string(b), want) || !strings.Contains(string(b), `"buyer":{"email":"buyer@example.com"`) {
			t.Errorf("OrderCreateRequest marshals to %s (%v), want %s", b, err, want)
		}
	}
	var preview OrderPreviewRequest
	if err := preview.FromOrderPreviewSeatsRequest(OrderPreviewSeatsRequest{SeatReservationIds: []string{"rsv_1"}}); err != nil {
		t.Fatal(err)
	}

	// simulate-payment's outcome is optional: the zero body sends nothing.
	if b, _ := json.Marshal(SimulatePaymentJSONRequestBody{}); string(b) != "{}" {
		t.Errorf("empty SimulatePaymentRequest marshals to %s, want {}", b)
	}

	// Webhook bodies and free-form objects are readable.
	var paid WebhookOrderPaidJSONBody
	envelope := `{"id":"evt_1","type":"order.paid","api_version":"2026-06-01","created_at":"2026-06-01T10:00:00Z","livemode":false,
		"data":{"order":{"id":"ord_1","type":"ticket","status":"paid","is_paid":true,"livemode":false,"currency":"RUB","base_price":100,
		"service_fee":0,"total_price":100,"quantity":1,"event_id":"evt_x","ticket_tier_id":null,"occurrence_tier_id":null,
		"paid_at":"2026-06-01T10:00:00Z","created_at":"2026-06-01T09:59:00Z"}}}`
	if err := json.Unmarshal([]byte(envelope), &paid); err != nil || paid.Livemode || !paid.Data.Order.IsPaid {
		t.Errorf("order.paid envelope: %+v %v", paid, err)
	}
	var layout SeatingLayout
	if err := json.Unmarshal([]byte(`{"id":"l","width":1,"height":1,"background_url":null,"decorations":{"stage":{"x":1}}}`), &layout); err != nil || layout.Decorations == nil || (*layout.Decorations)["stage"] == nil {
		t.Errorf("decorations: %+v %v", layout, err)
	}
}
