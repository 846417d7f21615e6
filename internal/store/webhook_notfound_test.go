package store_test

import (
	"context"
	"errors"
	"testing"

	"tix/internal/webhook"
)

// Every webhook read or write of one item that is absent (or whose id is not
// one) answers webhook.ErrNotFound, never a nil result without an error.
func TestWebhookStore_NotFoundIsAnError(t *testing.T) {
	t.Parallel()
	ws, clk := hookStore(t)
	ctx := context.Background()
	now := clk.Now()
	getEvent := func(id string) (any, error) { ev, _, err := ws.GetOrderEvent(ctx, id); return ev, err }
	loadAttempt := func(id string) (any, error) { d, _, _, err := ws.LoadAttempt(ctx, id); return d, err }
	for _, tc := range []struct {
		name string
		ids  []string
		call func(id string) (any, error)
	}{
		{"GetEndpoint", []string{"we_missing", "we bad/id"}, func(id string) (any, error) { return ws.GetEndpoint(ctx, id) }},
		{"EndpointFailed", []string{"we_missing"}, func(id string) (any, error) { return ws.EndpointFailed(ctx, id, now) }},
		{"EndpointSucceeded", []string{"we_missing"}, func(id string) (any, error) { return nil, ws.EndpointSucceeded(ctx, id, now) }},
		{"DisableEndpoint", []string{"we_missing"}, func(id string) (any, error) { return ws.DisableEndpoint(ctx, id, "gone", now) }},
		{"GetOrderEvent", []string{"evt_missing", "evt bad/id"}, getEvent},
		{"Dispatch", []string{"evt_missing"}, func(id string) (any, error) { return nil, ws.Dispatch(ctx, id, nil) }},
		{"GetDelivery", []string{"whd_missing_gone", "not-a-delivery"}, func(id string) (any, error) { return ws.GetDelivery(ctx, id) }},
		{"LoadAttempt", []string{"whd_missing_gone", "not-a-delivery"}, loadAttempt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, id := range tc.ids {
				if got, err := tc.call(id); !errors.Is(err, webhook.ErrNotFound) {
					t.Errorf("%s(%q) = %v, %v; want ErrNotFound", tc.name, id, got, err)
				}
			}
		})
	}
}
