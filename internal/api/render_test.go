package api

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// objectPrefix is an encoded object without its closing brace: the members
// another encoding must start with.
func objectPrefix(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b[:len(b)-1]
}

// An order's status is the webhook's data.order, member for member, followed by
// the API's additions (and the buyer only when PII is shown).
func TestRenderOrder_IsTheWebhookOrderThenAdditions(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 6, 1, 10, 0, 0, 500_000_000, time.UTC)
	name := "Ann <&>"
	pending := &ticketing.Order{
		ID: "ord_1", Type: "ticket", Status: ticketing.OrderPending, Environment: ticketing.EnvTest,
		EventID: "evt_1", OccurrenceID: "occ_1", Lines: []ticketing.OrderLine{{TierID: "tier_1"}},
		Quantity: 2, Currency: "RUB", BasePrice: 5000, TotalPrice: 5000,
		Buyer: ticketing.Buyer{Email: "a@example.com", Name: &name}, CreatedAt: created, ExpiresAt: created.Add(15 * time.Minute),
	}
	paidAt := created.Add(time.Minute)
	paid := *pending
	paid.Status, paid.PaidAt, paid.OccurrenceID, paid.Environment = ticketing.OrderPaid, &paidAt, "", ticketing.EnvLive
	cases := []struct {
		name  string
		order *ticketing.Order
		pii   bool
		rest  string
	}{
		{"pending without PII", pending, false, `,"occurrence_id":"occ_1","expires_at":"2026-06-01T10:15:00Z"}`},
		{"pending with PII", pending, true, `,"occurrence_id":"occ_1","expires_at":"2026-06-01T10:15:00Z","buyer":{"email":"a@example.com","name":"Ann \u003c\u0026\u003e","phone":null}}`},
		{"paid single event", &paid, false, `,"occurrence_id":null,"expires_at":null}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(renderOrder(c.order, c.pii))
			if err != nil {
				t.Fatal(err)
			}
			want := append(objectPrefix(t, c.order.Webhook()), c.rest...)
			if !bytes.Equal(got, want) {
				t.Errorf("order status\n got %s\nwant %s", got, want)
			}
		})
	}
}

// A Tier is its AvailabilityTier, member for member, followed by the tier's own
// members; availability renders exactly that embedded part.
func TestRenderTier_IsTheAvailabilityTierThenItsOwnMembers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	start := now.Add(-time.Hour)
	desc := "Near the stage"
	e := &ticketing.Event{
		ID: "evt_1", Status: ticketing.EventPublished, Currency: "RUB", Kind: ticketing.KindSingle,
		StartsAt: now.Add(48 * time.Hour), EndsAt: now.Add(50 * time.Hour),
		Tiers: []ticketing.Tier{{ID: "tier_1", Name: "Floor", Description: &desc, Price: 2500, Capacity: 10, PersonsIncluded: 2, SalesStartAt: &start}},
	}
	v := &ticketing.EventView{
		Event: e, Now: now,
		Stock: &ticketing.Stock{Sold: map[ticketing.StockKey]int{{Occurrence: ticketing.NoOccurrence, ID: "tier_1"}: 3}, Seats: map[ticketing.StockKey]ticketing.SeatState{}},
	}
	tier := renderTier(v, &e.Tiers[0])
	got, err := json.Marshal(tier)
	if err != nil {
		t.Fatal(err)
	}
	want := append(objectPrefix(t, tier.availabilityTierJSON), `,"description":"Near the stage","persons_included":2,"seating":false}`...)
	if !bytes.Equal(got, want) {
		t.Errorf("tier\n got %s\nwant %s", got, want)
	}
	if tier.QtySold != 3 || tier.QtyAvailable != 7 || !tier.IsOnSale {
		t.Errorf("tier counts: %+v", tier.availabilityTierJSON)
	}
	a := renderAvailability(v)
	if len(a.Tiers) != 1 || !bytes.Equal(objectPrefix(t, a.Tiers[0]), objectPrefix(t, tier.availabilityTierJSON)) {
		t.Errorf("availability tiers = %+v, want %+v", a.Tiers, tier.availabilityTierJSON)
	}
}
