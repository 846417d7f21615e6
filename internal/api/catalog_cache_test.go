package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// tableCalls counts the DynamoDB requests of the catalog and sales paths (the
// key lookup and the rate-limit charge are left out).
type tableCalls struct {
	mu sync.Mutex
	n  map[string]int
}

func countTableCalls(h *harness) *tableCalls {
	c := &tableCalls{n: map[string]int{}}
	h.st.OnCapacity(func(op string, _ *types.ConsumedCapacity) {
		if op == "CountRequest" || op == "LookupKey" {
			return
		}
		c.mu.Lock()
		c.n[op]++
		c.mu.Unlock()
	})
	return c
}

// take returns the requests counted since the last take.
func (c *tableCalls) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, n := range c.n {
		total += n
	}
	c.n = map[string]int{}
	return total
}

// withViewCache turns on the catalog cache of a harness (off by default, so
// that the other tests read their writes at once).
func withViewCache(h *harness, ttl time.Duration) {
	h.srv.Catalog.Cache = ticketing.NewReadCache(h.clk, ttl)
}

// A publishable key's second read of an event's availability, detail or tiers
// within the TTL does not touch the table; one after the TTL does, and sees
// the new stock. (The sales path here does not drop views, as when another
// function instance sells: catalog_fresh_test.go has this process's own.)
func TestCatalogCache_SecondReadWithinTTLSkipsTheTable(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	withViewCache(h, time.Second)
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	calls := countTableCalls(h)

	avail := func() map[string]any {
		t.Helper()
		r := h.get("/v1/events/evt_concert/availability", pk, fromShop())
		wantStatus(t, r, http.StatusOK)
		if cc := r.Header.Get("Cache-Control"); cc != "private, max-age=1" {
			t.Errorf("Cache-Control %q, want private, max-age=1", cc)
		}
		if v := strings.Join(r.Header.Values("Vary"), ","); !strings.Contains(v, "Authorization") {
			t.Errorf("Vary %q lacks Authorization", v)
		}
		return r.json(t)
	}
	avail()
	cold := calls.take()
	if cold == 0 {
		t.Fatal("a cold availability read made no DynamoDB request")
	}
	h.clk.Advance(999 * time.Millisecond)
	avail()
	for _, p := range []string{"/v1/events/evt_concert", "/v1/events/evt_concert/tiers"} {
		wantStatus(t, h.get(p, pk, fromShop()), http.StatusOK)
	}
	if n := calls.take(); n != 0 {
		t.Fatalf("availability, detail and tiers within the TTL made %d DynamoDB requests, want 0", n)
	}
	t.Logf("availability read: %d DynamoDB requests cold, 0 warm", cold)

	wantStatus(t, h.post("/v1/orders", sk, gaOrder("evt_concert_ga", 2), idem("cache-1")), http.StatusCreated)
	calls.take()
	if got := avail()["total_available"].(float64); got != 110 {
		t.Fatalf("within the TTL: total_available %v, want the cached 110 (100 GA, 10 VIP)", got)
	}
	if n := calls.take(); n != 0 {
		t.Fatalf("cached read after an order made %d DynamoDB requests", n)
	}
	h.clk.Advance(time.Millisecond)
	if got := avail()["total_available"].(float64); got != 108 {
		t.Fatalf("after the TTL: total_available %v, want 108", got)
	}
	if n := calls.take(); n != cold {
		t.Fatalf("read after the TTL made %d DynamoDB requests, want %d as cold", n, cold)
	}

	// By slug is its own entry: cold once, then warm.
	wantStatus(t, h.get("/v1/events/by-slug/evt_concert", pk, fromShop()), http.StatusOK)
	if calls.take() == 0 {
		t.Fatal("first by-slug read made no DynamoDB request")
	}
	wantStatus(t, h.get("/v1/events/by-slug/evt_concert", pk, fromShop()), http.StatusOK)
	if n := calls.take(); n != 0 {
		t.Fatalf("second by-slug read made %d DynamoDB requests", n)
	}
}

// Entries are per organizer and environment; holds and orders decide on the
// table, never on a cached view.
func TestCatalogCache_TenantsApartAndOrdersCheckTheTable(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	small := baseEvent(orgA, "evt_small", "Small Room", day(8))
	small.Tiers[0].Capacity = 2
	if err := h.st.Catalog.PutEvent(context.Background(), small); err != nil {
		t.Fatal(err)
	}
	withViewCache(h, 2*time.Second)
	skTest, _ := h.key(orgA, auth.Secret)
	pkTest := h.pkKey(orgA)
	pkLive := h.pkKey(orgA, withEnv(ticketing.EnvLive))
	pkB := h.pkKey(orgB)
	calls := countTableCalls(h)
	available := func(secret string) float64 {
		t.Helper()
		r := h.get("/v1/events/evt_small/availability", secret, fromShop())
		wantStatus(t, r, http.StatusOK)
		if cc := r.Header.Get("Cache-Control"); cc != "private, max-age=2" {
			t.Errorf("Cache-Control %q, want private, max-age=2", cc)
		}
		return r.json(t)["total_available"].(float64)
	}

	if got := available(pkTest); got != 2 {
		t.Fatalf("test availability %v, want 2", got)
	}
	wantStatus(t, h.post("/v1/orders", skTest, gaOrder("evt_small_ga", 2), idem("small-1")), http.StatusCreated)
	calls.take()
	// The cached view still says 2 left; the order path reads the table and refuses.
	if got := available(pkTest); got != 2 {
		t.Fatalf("cached test availability %v, want the stale 2", got)
	}
	r := h.post("/v1/orders", skTest, gaOrder("evt_small_ga", 1), idem("small-2"))
	if r.StatusCode != http.StatusConflict {
		t.Fatalf("order for a sold-out tier behind a stale view: %d %s, want 409", r.StatusCode, r.body)
	}
	calls.take()
	// Live stock is its own: another entry, read from the table.
	if got := available(pkLive); got != 2 {
		t.Fatalf("live availability %v, want 2 (nothing sold live)", got)
	}
	if calls.take() == 0 {
		t.Fatal("the live key was served the test environment's cached view")
	}
	// Another organizer gets 404, not organizer A's cached view.
	wantError(t, h.get("/v1/events/evt_small/availability", pkB, fromShop()), http.StatusNotFound, "not_found", "")
	wantError(t, h.get("/v1/events/evt_small", pkB, fromShop()), http.StatusNotFound, "not_found", "")
	h.clk.Advance(2 * time.Second)
	if got := available(pkTest); got != 0 {
		t.Fatalf("test availability after the TTL %v, want 0", got)
	}
}

// TIX_CATALOG_CACHE_TTL=0 reads the table every time and says so to clients.
func TestCatalogCache_OffReadsEveryTime(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	withViewCache(h, 0)
	pk := h.pkKey(orgA)
	calls := countTableCalls(h)
	for i := 0; i < 2; i++ {
		r := h.get("/v1/events/evt_concert/availability", pk, fromShop())
		wantStatus(t, r, http.StatusOK)
		if cc := r.Header.Get("Cache-Control"); cc != "private, no-cache" {
			t.Errorf("Cache-Control %q, want private, no-cache", cc)
		}
		if calls.take() == 0 {
			t.Fatalf("read %d made no DynamoDB request with the cache off", i+1)
		}
	}
}
