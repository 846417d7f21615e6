//go:build clientcheck

// This test is compiled next to the client ogen generates from
// internal/api/openapi.yaml (scripts/clientcheck.sh): it runs the client over
// real responses with one enum value rewritten to a value it does not know.
// The contract says clients treat enums as open: the client must accept the
// response and give the value as it came.
package tixogen

import (
	"context"
	"testing"

	"github.com/ogen-go/ogen/ogenerrors"

	"tix.invalid/clientcheck/recorded"
)

// bearer authenticates with a secret key only.
type bearer struct{}

func (bearer) Bearer(context.Context, OperationName) (Bearer, error) {
	return Bearer{Token: "sk_test_clientcheck"}, nil
}

func (bearer) PollToken(context.Context, OperationName) (PollToken, error) {
	return PollToken{}, ogenerrors.ErrSkipClientSecurity
}

func (bearer) PollTokenHeader(context.Context, OperationName) (PollTokenHeader, error) {
	return PollTokenHeader{}, ogenerrors.ErrSkipClientSecurity
}

func client(t *testing.T, c recorded.Case) *Client {
	t.Helper()
	cl, err := NewClient(recorded.Serve(t, c.Body(t)), bearer{})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestOgenClientAcceptsUnknownEnumValues(t *testing.T) {
	ctx := context.Background()
	t.Run("event kind", func(t *testing.T) {
		c := recorded.Find(t, "event kind")
		res, err := client(t, c).ListEvents(ctx, ListEventsParams{})
		if err != nil {
			t.Fatalf("ListEvents: %v", err)
		}
		if ok, _ := res.(*EventListResponseHeaders); ok == nil || string(ok.Response.Data[0].EventKind) != c.Unknown {
			t.Errorf("ListEvents: %#v, want event_kind %q", res, c.Unknown)
		}
	})
	t.Run("order status", func(t *testing.T) {
		c := recorded.Find(t, "order status")
		res, err := client(t, c).GetOrder(ctx, GetOrderParams{ID: "ord_1"})
		if err != nil {
			t.Fatalf("GetOrder: %v", err)
		}
		if ok, _ := res.(*OrderStatusWithPIIHeaders); ok == nil || string(ok.Response.Status) != c.Unknown {
			t.Errorf("GetOrder: %#v, want status %q", res, c.Unknown)
		}
	})
	t.Run("ticket status", func(t *testing.T) {
		c := recorded.Find(t, "ticket status")
		res, err := client(t, c).GetOrderTickets(ctx, GetOrderTicketsParams{ID: "ord_1"})
		if err != nil {
			t.Fatalf("GetOrderTickets: %v", err)
		}
		if ok, _ := res.(*OrderTicketsHeaders); ok == nil || string(ok.Response.Tickets[0].Status) != c.Unknown {
			t.Errorf("GetOrderTickets: %#v, want tickets[0].status %q", res, c.Unknown)
		}
	})
	t.Run("delivery status", func(t *testing.T) {
		c := recorded.Find(t, "delivery status")
		res, err := client(t, c).ListWebhookDeliveries(ctx, ListWebhookDeliveriesParams{})
		if err != nil {
			t.Fatalf("ListWebhookDeliveries: %v", err)
		}
		if ok, _ := res.(*WebhookDeliveryListResponseHeaders); ok == nil || string(ok.Response.Data[0].Status) != c.Unknown {
			t.Errorf("ListWebhookDeliveries: %#v, want status %q", res, c.Unknown)
		}
	})
}
