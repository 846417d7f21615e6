package ticketingtest

import (
	"testing"
	"time"

	"tix/internal/ticketing"
)

// The sharded event: one general-admission tier of ShardedCap units, whose
// shards hold 64, 64 and 2 (ticketing.ShardCaps).
const (
	ShardedEvent = "evt_conf_sh"
	ShardedTier  = "tier_conf_sh"
	ShardedCap   = 130
)

func (f *fixture) shardedEvent(t *testing.T) *ticketing.Event {
	t.Helper()
	e := Event(f.now)
	e.ID, e.Ref, e.HasSeating, e.Seating, e.Zones, e.Promos = ShardedEvent, "conf-sh", false, nil, nil, nil
	e.Tiers = []ticketing.Tier{{ID: ShardedTier, Name: "GA", Price: 150000, Capacity: ShardedCap, PersonsIncluded: 1}}
	must(t, "seed the sharded event", f.st.Events.PutEvent(f.ctx, e))
	got, err := f.st.Catalog.GetEvent(f.ctx, Org, ShardedEvent, ticketing.EnvTest)
	must(t, "read the sharded event", err)
	return got
}

func (f *fixture) shardedOrder(qty int) *ticketing.Order {
	o := f.gaOrder(qty)
	o.EventID, o.Lines[0].TierID = ShardedEvent, ShardedTier
	return o
}

// wantShards checks the tier's shards: each within 0 and its cap, summing to
// sold, and the ones given exactly as want (shard -> units).
func (f *fixture) wantShards(t *testing.T, what string, sold int, want map[int]int) {
	t.Helper()
	st, err := f.st.Catalog.GetStock(f.ctx, ShardedEvent, ticketing.EnvTest, "")
	must(t, "stock", err)
	k := ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: ShardedTier}
	caps, sum := ticketing.ShardCaps(ShardedCap), 0
	for sh, n := range st.Shards[k] {
		if sh >= len(caps) || n < 0 || n > caps[sh] {
			t.Fatalf("%s: shard %d holds %d (caps %v)", what, sh, n, caps)
		}
		sum += n
	}
	if sum != sold || st.Sold[k] != sold {
		t.Fatalf("%s: shards %v sum %d, sold %d, want %d", what, st.Shards[k], sum, st.Sold[k], sold)
	}
	for sh, n := range want {
		if st.Shards[k][sh] != n {
			t.Fatalf("%s: shards %v, want %v", what, st.Shards[k], want)
		}
	}
}

// lineShards checks what the stored order's line records it took.
func (f *fixture) lineShards(t *testing.T, id string, parts int) []ticketing.ShardTake {
	t.Helper()
	got, err := f.st.OrderStore.GetOrder(f.ctx, id)
	must(t, "read "+id, err)
	takes, sum := got.Lines[0].Shards, 0
	for _, tk := range takes {
		sum += tk.Quantity
	}
	if len(takes) != parts || sum != got.Lines[0].Quantity {
		t.Fatalf("order %s took %+v, want %d shards adding up to %d", id, takes, parts, got.Lines[0].Quantity)
	}
	return takes
}

func testShardedSellOut(t *testing.T, f *fixture) {
	e := f.shardedEvent(t)
	var orders []*ticketing.Order
	for range 12 {
		o := f.shardedOrder(10)
		must(t, "order of 10", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
		f.lineShards(t, o.ID, 1)
		orders = append(orders, o)
	}
	// 10 units fit in no shard alone (60/64, 60/64, 0/2): they come from all three.
	f.wantShards(t, "twelve orders of 10", 120, map[int]int{0: 60, 1: 60, 2: 0})
	frag := f.shardedOrder(10)
	must(t, "the last 10 over three shards", f.st.OrderStore.CreateOrder(f.ctx, frag, e, f.now))
	f.lineShards(t, frag.ID, 3)
	f.wantShards(t, "sold out", ShardedCap, map[int]int{0: 64, 1: 64, 2: 2})
	wantStock(t, "one more", f.st.OrderStore.CreateOrder(f.ctx, f.shardedOrder(1), e, f.now), 0, false)

	c := *frag
	c.Status, c.CancelReason = ticketing.OrderCancelled, "expired"
	must(t, "cancel the fragmented order", f.st.OrderStore.CancelOrder(f.ctx, &c, f.outboxEvent(ticketing.EventOrderCancelled, &c), f.now, false))
	f.wantShards(t, "after the cancellation", 120, map[int]int{0: 60, 1: 60, 2: 0})

	paid := orders[0]
	taken := f.lineShards(t, paid.ID, 1)[0]
	f.pay(t, paid)
	f.refund(t, paid)
	f.wantShards(t, "after the refund", 110, map[int]int{taken.Shard: 50})

	late := orders[1]
	f.cancelLive(t, late, late.ExpiresAt.Add(time.Hour))
	f.wantShards(t, "after the expiry", 100, nil)
	at := late.ExpiresAt.Add(time.Minute)
	r := f.reinstated(late, at)
	must(t, "reinstate", f.st.OrderStore.ReinstateOrder(f.ctx, r, e, f.outboxEvent(ticketing.EventOrderPaid, r), at, nil))
	f.lineShards(t, late.ID, 1)
	f.wantShards(t, "after the reinstatement", 110, nil)
	more := f.shardedOrder(10)
	must(t, "10 more", f.st.OrderStore.CreateOrder(f.ctx, more, e, f.now))
	must(t, "10 more again", f.st.OrderStore.CreateOrder(f.ctx, f.shardedOrder(10), e, f.now))
	f.wantShards(t, "sold out again", ShardedCap, nil)
}
