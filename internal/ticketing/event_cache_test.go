package ticketing_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// Orders price from the cached event for the cache's TTL: a price change
// takes effect for orders within it, and stock never comes from the cache.
func TestEventCache_PriceChangeWithinTheTTL(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	const ttl = 200 * time.Millisecond
	d.sales.Deps.EventCache = ticketing.NewEventCache(ttl)
	ev := ptr(ticketingtest.EventID)
	req := func() ticketing.OrderRequest { r := gaOrder(1); r.EventID = ev; return r }
	price := func(key string) int64 { return d.order(t, key, req()).TotalPrice }
	if p := price("a"); p != 150000 {
		t.Fatalf("price %d, want 150000", p)
	}
	e := ticketingtest.Event(d.now)
	e.Tiers[0].Price = 200000
	start := time.Now()
	if err := d.st.Catalog.PutEvent(ctx, e); err != nil {
		t.Fatal(err)
	}
	if p := price("b"); p != 150000 && time.Since(start) < ttl {
		t.Fatalf("price %d within the TTL, want the cached 150000", p)
	}
	time.Sleep(ttl)
	if p := price("c"); p != 200000 {
		t.Fatalf("price %d after the TTL, want 200000", p)
	}
	// Stock is not cached: the tier sells out at its capacity.
	for i := 3; i < ticketingtest.GACap; i++ {
		d.order(t, string(rune('d'+i)), req())
	}
	_, err := d.sales.Orders.CreateOrder(ctx, d.c, "last", req())
	wantCode(t, err, ticketing.CodeConflict, "tier_id")
}
