package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The delivery listings merge the write-sharded index partitions with the
// unsharded ones of deliveries written before the sharding: every delivery
// once, newest first, across pages of any size, with and without a status
// filter, and with a list budget small enough to end pages early.
func TestWebhookListDeliveriesMergesShards(t *testing.T) {
	t.Parallel()
	h := newHookEnv(t)
	ctx := context.Background()
	base := h.clk.Now()
	var all []*webhook.Delivery // creation order
	for i := range 40 {
		ev := &ticketing.OrderEvent{ID: fmt.Sprintf("evt_merge%03d", i), OrganizerID: salesOrg, Environment: ticketing.EnvTest,
			Type: ticketing.EventOrderPaid}
		ep := []string{"we_a", "we_b"}[i%2]
		d := newDelivery(ev, ep, base.Add(time.Duration(i)*time.Millisecond))
		if i%5 == 0 {
			d.Status, d.RecheckAt = webhook.DeliveryDelivered, nil
		}
		if err := h.st.PutDeliveryItem(ctx, d, i%3 == 0); err != nil {
			t.Fatal(err)
		}
		all = append(all, d)
	}
	list := func(q webhook.DeliveryQuery) []string { return h.listAll(t, q, 200) }
	want := func(keep func(d *webhook.Delivery) bool) []string {
		var r []string
		for i := len(all) - 1; i >= 0; i-- {
			if keep(all[i]) {
				r = append(r, all[i].ID)
			}
		}
		return r
	}
	every := func(*webhook.Delivery) bool { return true }
	delivered := func(d *webhook.Delivery) bool { return d.Status == webhook.DeliveryDelivered }
	for _, budget := range []int{0, 3} {
		h.st.SetListBudget(budget)
		for _, c := range []struct {
			name string
			q    webhook.DeliveryQuery
			keep func(*webhook.Delivery) bool
		}{
			{"all", webhook.DeliveryQuery{Limit: 7}, every},
			{"one by one", webhook.DeliveryQuery{Limit: 1}, every},
			{"one page", webhook.DeliveryQuery{Limit: 100}, every},
			{"delivered", webhook.DeliveryQuery{Limit: 3, Status: webhook.DeliveryDelivered}, delivered},
			{"endpoint", webhook.DeliveryQuery{Limit: 4, EndpointID: "we_b"}, func(d *webhook.Delivery) bool { return d.EndpointID == "we_b" }},
			{"endpoint delivered", webhook.DeliveryQuery{Limit: 2, EndpointID: "we_a", Status: webhook.DeliveryDelivered},
				func(d *webhook.Delivery) bool { return d.EndpointID == "we_a" && delivered(d) }},
		} {
			if got, w := list(c.q), want(c.keep); !slices.Equal(got, w) {
				t.Errorf("budget %d, %s: %v, want %v", budget, c.name, got, w)
			}
		}
	}
	pend, err := h.ws.PendingDeliveries(ctx, "we_a", 100)
	if n := len(want(func(d *webhook.Delivery) bool { return d.EndpointID == "we_a" && !delivered(d) })); err != nil || len(pend) != n {
		t.Fatalf("pending of we_a: %d, %v; want %d (sharded and legacy)", len(pend), err, n)
	}
}
