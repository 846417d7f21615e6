package store_test

import (
	"context"
	"slices"
	"testing"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// An order's deliveries are found through its events' order key, after
// dispatch too, and only that order's: another order's event and its
// deliveries stay out.
func TestOrderDeliveries(t *testing.T) {
	t.Parallel()
	h := newHookEnv(t)
	ctx := context.Background()
	ev1, ev2 := h.paidEvent(t), h.paidEvent(t)
	now := h.clk.Now()
	for _, ep := range []string{"we_a", "we_b"} {
		if err := h.ws.CreateEndpoint(ctx, newEndpoint(ep, salesOrg, ticketing.EnvTest, now), 5); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.ws.Dispatch(ctx, ev1.ID, []*webhook.Delivery{newDelivery(ev1, "we_a", now), newDelivery(ev1, "we_b", now)}); err != nil {
		t.Fatal(err)
	}
	if err := h.ws.Dispatch(ctx, ev2.ID, []*webhook.Delivery{newDelivery(ev2, "we_a", now)}); err != nil {
		t.Fatal(err)
	}
	got, err := h.ws.OrderDeliveries(ctx, ev1.Order.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range got {
		ids = append(ids, d.ID)
	}
	want := []string{webhook.DeliveryID(ev1.ID, "we_a"), webhook.DeliveryID(ev1.ID, "we_b")}
	if !slices.Equal(ids, want) {
		t.Fatalf("deliveries of order %s: %v, want %v", ev1.Order.ID, ids, want)
	}
	if got, err := h.ws.OrderDeliveries(ctx, "ord_unknown"); err != nil || len(got) != 0 {
		t.Fatalf("an unknown order: %v, %v", got, err)
	}
	if got, err := h.ws.OrderDeliveries(ctx, "bad id with spaces"); err != nil || len(got) != 0 {
		t.Fatalf("a malformed id: %v, %v", got, err)
	}
}
