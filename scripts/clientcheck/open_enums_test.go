//go:build clientcheck

package tixclient

import (
	"context"
	"testing"

	"tix.invalid/clientcheck/recorded"
)

// The oapi-codegen client over real responses with one enum value rewritten
// to a value it does not know (see recorded): the response is accepted and
// the value is given as it came, outside the generated constants.
func TestGeneratedClientAcceptsUnknownEnumValues(t *testing.T) {
	ctx := context.Background()
	client := func(t *testing.T, c recorded.Case) *ClientWithResponses {
		t.Helper()
		cl, err := NewClientWithResponses(recorded.Serve(t, c.Body(t)))
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	t.Run("event kind", func(t *testing.T) {
		c := recorded.Find(t, "event kind")
		res, err := client(t, c).ListEventsWithResponse(ctx, &ListEventsParams{})
		if err != nil || res.JSON200 == nil {
			t.Fatalf("ListEvents: %v %s", err, res.Body)
		}
		if got := res.JSON200.Data[0].EventKind; string(got) != c.Unknown || got.Valid() {
			t.Errorf("event_kind %q (known: %v), want %q", got, got.Valid(), c.Unknown)
		}
	})
	t.Run("order status", func(t *testing.T) {
		c := recorded.Find(t, "order status")
		res, err := client(t, c).GetOrderWithResponse(ctx, "ord_1", &GetOrderParams{})
		if err != nil || res.JSON200 == nil {
			t.Fatalf("GetOrder: %v %s", err, res.Body)
		}
		if got := res.JSON200.Status; string(got) != c.Unknown || got.Valid() {
			t.Errorf("status %q (known: %v), want %q", got, got.Valid(), c.Unknown)
		}
	})
	t.Run("ticket status", func(t *testing.T) {
		c := recorded.Find(t, "ticket status")
		res, err := client(t, c).GetOrderTicketsWithResponse(ctx, "ord_1")
		if err != nil || res.JSON200 == nil {
			t.Fatalf("GetOrderTickets: %v %s", err, res.Body)
		}
		if got := res.JSON200.Tickets[0].Status; string(got) != c.Unknown || got.Valid() {
			t.Errorf("tickets[0].status %q (known: %v), want %q", got, got.Valid(), c.Unknown)
		}
	})
	t.Run("delivery status", func(t *testing.T) {
		c := recorded.Find(t, "delivery status")
		res, err := client(t, c).ListWebhookDeliveriesWithResponse(ctx, &ListWebhookDeliveriesParams{})
		if err != nil || res.JSON200 == nil {
			t.Fatalf("ListWebhookDeliveries: %v %s", err, res.Body)
		}
		if got := res.JSON200.Data[0].Status; string(got) != c.Unknown || got.Valid() {
			t.Errorf("status %q (known: %v), want %q", got, got.Valid(), c.Unknown)
		}
	})
}
