package ticketing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// An error's text names its code, its message, the parameter and the cause,
// each only when there is one: the log line an operator reads.
func TestError_TextNamesParamAndCauseWhenSet(t *testing.T) {
	cause := errors.New("store down")
	for _, c := range []struct {
		e    *ticketing.Error
		want string
	}{
		{&ticketing.Error{Code: ticketing.CodeConflict, Message: "sold out"}, "conflict: sold out"},
		{&ticketing.Error{Code: ticketing.CodeConflict, Message: "sold out", Param: "tier_id"}, "conflict: sold out (param tier_id)"},
		{&ticketing.Error{Code: ticketing.CodeConflict, Message: "sold out", Err: cause}, "conflict: sold out: store down"},
		{&ticketing.Error{Code: ticketing.CodeConflict, Message: "sold out", Param: "tier_id", Err: cause}, "conflict: sold out (param tier_id): store down"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// A cache with no lifetime caches nothing: a price change applies to the next order.
func TestEventCache_NoTTLCachesNothing(t *testing.T) {
	d := newDomain(t)
	d.sales.Deps.EventCache = ticketing.NewEventCache(0)
	if p := d.order(t, "a", gaOrder(1)).TotalPrice; p != 150000 {
		t.Fatalf("price %d, want 150000", p)
	}
	setGAPrice(t, d, 200000)
	if p := d.order(t, "b", gaOrder(1)).TotalPrice; p != 200000 {
		t.Fatalf("price %d with a zero TTL, want the new 200000", p)
	}
}

// The cache keeps several events at once: pricing a second event does not
// drop the first (it is emptied only when full), and an order by tier alone
// finds its event through the cache's tier map.
func TestEventCache_KeepsSeveralEventsAndTiers(t *testing.T) {
	d := newDomain(t)
	d.sales.Deps.EventCache = ticketing.NewEventCache(time.Hour)
	if p := d.order(t, "a", gaOrder(1)).TotalPrice; p != 150000 {
		t.Fatalf("price %d, want 150000", p)
	}
	other := ticketing.OrderRequest{Buyer: gaOrder(1).Buyer, TierID: ptr(priceGA)}
	if o := d.order(t, "b", other); o.EventID != priceEvent {
		t.Fatalf("order by tier %s is for event %s, want %s", priceGA, o.EventID, priceEvent)
	}
	setGAPrice(t, d, 200000)
	for _, key := range []string{"c", "d"} { // the second time, the tier's event comes from the cache
		o := d.order(t, key, gaOrder(1))
		if o.TotalPrice != 150000 || o.EventID != ticketingtest.EventID {
			t.Fatalf("order %s: price %d for %s, want the cached 150000 for %s", key, o.TotalPrice, o.EventID, ticketingtest.EventID)
		}
	}
}

func setGAPrice(t *testing.T, d *domain, price int64) {
	t.Helper()
	e := ticketingtest.Event(d.now)
	e.Tiers[0].Price = price
	if err := d.st.Catalog.PutEvent(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}
