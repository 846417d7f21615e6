package catalogimport_test

import (
	"slices"
	"testing"
	"time"

	"tix/internal/catalogimport"
	"tix/internal/ticketing"
)

func TestCheckReimport(t *testing.T) {
	t.Parallel()
	build := func(e map[string]any) *ticketing.Event {
		t.Helper()
		return parseOK(t, catalogJSON(t, e))[0]
	}
	seatID := func(e *ticketing.Event, label string) string {
		for _, z := range e.Seating.Zones {
			for _, s := range z.Seats {
				if s.Label == label {
					return s.ID
				}
			}
		}
		t.Fatalf("no seat %s", label)
		return ""
	}
	ga, seated, series := build(gaEvent("a")), build(seatedEvent("a")), build(seriesEvent("a"))
	withCodes := build(withPromos(gaEvent("a"), promo("DEMO10", "percent", 10)))
	limited := func(uses int) map[string]any {
		p := promo("FIRST", "percent", 10)
		p["max_uses"] = uses
		return withPromos(gaEvent("a"), p)
	}
	legacyCode := build(limited(5))
	shardedCode := build(limited(200))
	shardedCode.CreatedAt = ticketing.RateLayoutFrom
	uses := func(shards map[int]int) *ticketing.Stock {
		return &ticketing.Stock{Promos: map[string]map[int]int{"FIRST": shards}}
	}
	floor := ga.Tiers[0].ID
	stallsTier, vipTier := seated.Tiers[0].ID, seated.Tiers[1].ID
	w2 := series.Occurrences[1].ID
	sold := func(occ, id string, n int) *ticketing.Stock {
		return &ticketing.Stock{Sold: map[ticketing.StockKey]int{{Occurrence: occ, ID: id}: n}}
	}
	seat := func(id, tier, status string, until time.Time) *ticketing.Stock {
		return &ticketing.Stock{Seats: map[ticketing.StockKey]ticketing.SeatState{
			{Occurrence: ticketing.NoOccurrence, ID: id}: {TierID: tier, Status: status, Until: until},
		}}
	}
	cases := []struct {
		name    string
		old     *ticketing.Event
		updated func() map[string]any
		env     ticketing.Environment
		stock   *ticketing.Stock
		want    []string
	}{
		{"TierWithSalesCannotBeRemoved", ga, func() map[string]any {
			e := gaEvent("a")
			at(e, "tiers", 0)["ref"] = "balcony"
			return e
		}, ticketing.EnvTest, sold("-", floor, 3),
			[]string{`events[0].tiers: tier "floor" (` + floor + `) has 3 units or seats taken in test and cannot be removed`}},
		{"CapacityNotBelowSold", ga, func() map[string]any {
			e := gaEvent("a")
			at(e, "tiers", 0)["capacity"] = 2
			return e
		}, ticketing.EnvLive, sold("-", floor, 3),
			[]string{"events[0].tiers[0].capacity: must be >= 3: 3 units are sold in live"}},
		{"CapacityNotBelowAShardsSales", ga, func() map[string]any {
			e := gaEvent("a")
			at(e, "tiers", 0)["capacity"] = 1000
			return e
		}, ticketing.EnvLive, &ticketing.Stock{Sold: map[ticketing.StockKey]int{{Occurrence: "-", ID: floor}: 125},
			Shards: map[ticketing.StockKey]map[int]int{{Occurrence: "-", ID: floor}: {0: 125}}},
			[]string{"events[0].tiers[0].capacity: must be >= 1985: the units sold in live are spread over the tier's stock shards, and a smaller capacity would leave a shard holding more than its share"}},
		{"CapacityWithinEveryShardIsFine", ga, func() map[string]any {
			e := gaEvent("a")
			at(e, "tiers", 0)["capacity"] = 100
			return e
		}, ticketing.EnvLive, &ticketing.Stock{Sold: map[ticketing.StockKey]int{{Occurrence: "-", ID: floor}: 94},
			Shards: map[ticketing.StockKey]map[int]int{{Occurrence: "-", ID: floor}: {0: 64, 1: 30}}}, nil},
		{"PromoLimitNotBelowItsUses", legacyCode, func() map[string]any { return limited(3) }, ticketing.EnvLive, uses(map[int]int{0: 4}),
			[]string{"events[0].promo_codes[0].max_uses: must be >= 4: the code's uses in live are spread over the shards of its counter, and a lower limit would leave a shard holding more than its share"}},
		{"PromoLimitNotBelowAShardsUses", shardedCode, func() map[string]any { return limited(128) }, ticketing.EnvTest, uses(map[int]int{0: 2, 7: 1}),
			[]string{"events[0].promo_codes[0].max_uses: must be >= 129: the code's uses in test are spread over the shards of its counter, and a lower limit would leave a shard holding more than its share"}},
		{"PromoLimitWithinEveryShardIsFine", shardedCode, func() map[string]any { return limited(150) }, ticketing.EnvTest, uses(map[int]int{0: 2, 21: 2, 100: 1}), nil},
		{"CapacityEqualToSoldIsFine", ga, func() map[string]any {
			e := gaEvent("a")
			at(e, "tiers", 0)["capacity"] = 3
			return e
		}, ticketing.EnvLive, sold("-", floor, 3), nil},
		{"SoldSeatCannotBeRemoved", seated, func() map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0, "rows", 1)["seats"] = 9
			return e
		}, ticketing.EnvTest, seat(seatID(seated, "B-10"), stallsTier, ticketing.SeatSold, time.Time{}),
			[]string{"events[0].seating: 1 taken seats in test cannot be removed: B-10 (sold)"}},
		{"HeldSeatCannotBeRemoved", seated, func() map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0, "rows", 1)["seats"] = 9
			return e
		}, ticketing.EnvTest, seat(seatID(seated, "B-10"), stallsTier, ticketing.SeatHeld, importNow.Add(time.Minute)),
			[]string{"events[0].seating: 1 taken seats in test cannot be removed: B-10 (held)"}},
		{"ExpiredHoldDoesNotCount", seated, func() map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0, "rows", 1)["seats"] = 9
			return e
		}, ticketing.EnvTest, seat(seatID(seated, "B-10"), stallsTier, ticketing.SeatReserved, importNow.Add(-time.Minute)), nil},
		{"TakenSeatCannotChangeTier", seated, func() map[string]any {
			e := seatedEvent("a")
			delete(at(e, "seating", "zones", 0, "rows", 0), "tier")
			at(e, "seating", "zones", 0, "rows", 1)["tier"] = "vip"
			return e
		}, ticketing.EnvTest, seat(seatID(seated, "A-2"), vipTier, ticketing.SeatSold, time.Time{}),
			[]string{`events[0].seating: 1 taken seats in test cannot move to another tier: A-2 (sold as "vip" (` + vipTier + `))`}},
		{"SeatedTierWithTakenSeatsCannotBeRemoved", seated, func() map[string]any {
			e := seatedEvent("a")
			e["tiers"] = []any{at(e, "tiers", 0), at(e, "tiers", 2)}
			delete(at(e, "seating", "zones", 0, "rows", 0), "tier")
			return e
		}, ticketing.EnvLive, seat(seatID(seated, "A-2"), vipTier, ticketing.SeatReserved, importNow.Add(time.Minute)),
			[]string{`events[0].tiers: tier "vip" (` + vipTier + `) has 1 units or seats taken in live and cannot be removed`}},
		{"OccurrenceWithSalesCannotBeRemoved", series, func() map[string]any {
			e := seriesEvent("a")
			e["occurrences"] = e["occurrences"].([]any)[:1]
			return e
		}, ticketing.EnvTest, sold(w2, series.Tiers[0].ID, 1),
			[]string{`events[0].occurrences: occurrence "w2" (` + w2 + `) has 1 units or seats taken in test and cannot be removed (set its status to cancelled instead)`}},
		{"OccurrenceWithSalesCanBeCancelled", series, func() map[string]any {
			e := seriesEvent("a")
			at(e, "occurrences", 1)["status"] = "cancelled"
			return e
		}, ticketing.EnvTest, sold(w2, series.Tiers[0].ID, 1), nil},
		{"CapacityPerOccurrence", series, func() map[string]any {
			e := seriesEvent("a")
			at(e, "tiers", 0)["capacity"] = 4
			return e
		}, ticketing.EnvTest, sold(w2, series.Tiers[0].ID, 5),
			[]string{`events[0].tiers[0].capacity: must be >= 5: 5 units are sold in test for occurrence "w2" (` + w2 + `)`}},
		{"SingleWithSalesCannotGainOccurrences", ga, func() map[string]any { return seriesEvent("a") },
			ticketing.EnvTest, sold("-", floor, 1),
			[]string{"events[0].kind: the event has 1 units or seats taken in test as a single event and cannot be given occurrences"}},
		{"PromoCodesAreReplacedFreely", withCodes, func() map[string]any {
			return withPromos(gaEvent("a"), promo("OTHER", "fixed", 100))
		}, ticketing.EnvLive, sold("-", floor, 3), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			updated := parseOK(t, catalogJSON(t, tc.updated()))[0]
			got := catalogimport.CheckReimport("events[0]", tc.old, updated, tc.env, tc.stock, importNow)
			var lines []string
			for _, p := range got {
				lines = append(lines, p.String())
			}
			if !slices.Equal(lines, tc.want) {
				t.Errorf("problems:\n  got  %q\n  want %q", lines, tc.want)
			}
		})
	}
	t.Run("NewEventIsNotChecked", func(t *testing.T) {
		if got := catalogimport.CheckReimport("events[0]", nil, ga, ticketing.EnvTest, sold("-", floor, 9), importNow); got != nil {
			t.Errorf("got %v", got)
		}
	})
}
