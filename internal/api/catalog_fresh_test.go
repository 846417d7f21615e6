package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/ticketing"
)

// withWatchedViewCache turns on the catalog cache as app.New wires it (the
// sales path's store drops the views of what it changes), on a clock of its
// own that never moves: a view goes only when invalidated, whatever the test
// does with the harness clock.
func withWatchedViewCache(h *harness) *ticketing.ReadCache {
	rc := ticketing.NewReadCache(clock.NewFixed(t0), time.Second)
	h.srv.Catalog.Cache = rc
	*h.sales = *ticketing.NewSales(rc.Watch(h.st.Sales()), h.sales.Deps)
	return rc
}

// smallEvent stores an event whose one tier has capacity units and returns the tier id.
func (h *harness) smallEvent(id string, capacity int) string {
	h.t.Helper()
	e := baseEvent(orgA, id, "Small Room", day(8))
	e.Tiers[0].Capacity = capacity
	if err := h.st.Catalog.PutEvent(context.Background(), e); err != nil {
		h.t.Fatal(err)
	}
	return e.Tiers[0].ID
}

// tierLeft reads a tier's qty_available and sold_out, by the key (with
// opts, e.g. the shop's Origin for a pk key), and the response's Cache-Control.
func (h *harness) tierLeft(secret, event, tier string, opts ...reqOpt) (left int, soldOut bool, cacheControl string) {
	h.t.Helper()
	r := h.get("/v1/events/"+event+"/availability", secret, opts...)
	wantStatus(h.t, r, http.StatusOK)
	for _, x := range r.json(h.t)["tiers"].([]any) {
		if xm := x.(map[string]any); xm["id"] == tier {
			return int(xm["qty_available"].(float64)), xm["sold_out"].(bool), r.Header.Get("Cache-Control")
		}
	}
	h.t.Fatalf("availability of %s has no tier %s: %s", event, tier, r.body)
	return 0, false, ""
}

// A secret key sees its own sales at once: right after 40 parallel orders
// took a tier's last 10 units, its availability read says 0 and sold out, not
// the view cached before the sale.
func TestCatalogFreshness_SecretKeySeesItsOwnSalesAtOnce(t *testing.T) {
	h := newHarness(t)
	h.organizer(orgA)
	tier := h.smallEvent("evt_last10", 10)
	// A cache the sales path does not tell of its changes, as when another
	// function instance sells (on AWS, orders and catalog reads run in
	// different functions): the secret key's freshness is its own.
	h.srv.Catalog.Cache = ticketing.NewReadCache(clock.NewFixed(t0), time.Second)
	sk, _ := h.key(orgA, auth.Secret)

	left, soldOut, cc := h.tierLeft(sk, "evt_last10", tier)
	if left != 10 || soldOut {
		t.Fatalf("before the sale: qty_available %d sold_out %v, want 10, false", left, soldOut)
	}
	if cc != "private, no-cache" {
		t.Errorf("a secret key's availability: Cache-Control %q, want private, no-cache (read fresh)", cc)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	created, refused := 0, 0
	for i := range 40 {
		wg.Go(func() {
			r := h.post("/v1/orders", sk, gaOrder(tier, 1), idem(fmt.Sprintf("last10-%d", i)))
			mu.Lock()
			defer mu.Unlock()
			switch r.StatusCode {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
				refused++
			default:
				t.Errorf("order: %d %s", r.StatusCode, r.body)
			}
		})
	}
	wg.Wait()
	if created != 10 || refused != 30 {
		t.Fatalf("40 parallel orders of the last 10 units: %d created, %d refused, want 10 and 30", created, refused)
	}
	if left, soldOut, _ := h.tierLeft(sk, "evt_last10", tier); left != 0 || !soldOut {
		t.Fatalf("right after the sale the secret key reads qty_available %d sold_out %v, want 0, true", left, soldOut)
	}
}

// A publishable key reads through the cache, but a process never serves a
// view older than its own stock changes: an order, its expiry and a refund
// made here each show at once (the cache's clock never moves in this test).
func TestCatalogFreshness_ProcessThatChangedStockServesNoOlderView(t *testing.T) {
	h := newHarness(t)
	h.organizer(orgA)
	tier := h.smallEvent("evt_fresh", 10)
	withWatchedViewCache(h)
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	calls := countTableCalls(h)
	want := func(step string, n int) {
		t.Helper()
		left, _, cc := h.tierLeft(pk, "evt_fresh", tier, fromShop())
		if left != n || cc != "private, max-age=1" {
			t.Fatalf("%s: publishable read qty_available %d Cache-Control %q, want %d, private, max-age=1", step, left, cc, n)
		}
	}

	want("cold", 10)
	calls.take()
	want("warm", 10)
	if n := calls.take(); n != 0 {
		t.Fatalf("a warm publishable read made %d DynamoDB requests, want 0 (the cache serves it)", n)
	}
	expiring := h.mustOrder(sk, "fresh-1", gaOrder(tier, 2))["id"].(string)
	want("after an order of 2", 8)
	paid := h.mustOrder(pk, "fresh-2", gaOrder(tier, 3), fromShop())["id"].(string)
	want("after a publishable order of 3", 5)
	h.mustPay(sk, paid)
	want("after its payment", 5)

	h.clk.Advance(16 * time.Minute) // past the test order's expiry
	r := h.get("/v1/orders/"+expiring, sk)
	wantStatus(t, r, http.StatusOK)
	if s := r.json(t)["status"]; s != "cancelled" {
		t.Fatalf("order %s after its expiry: %v, want cancelled", expiring, s)
	}
	want("after the expiry gave 2 back", 7)

	wantStatus(t, h.post("/v1/orders/"+paid+"/refund", sk, `{"reason":"fresh"}`), http.StatusOK)
	h.clk.Advance(31 * time.Second) // the test provider settles the refund
	r = h.get("/v1/orders/"+paid+"/refund", sk)
	wantStatus(t, r, http.StatusOK)
	if s := r.json(t)["status"]; s != "completed" {
		t.Fatalf("refund of %s: %v, want completed", paid, s)
	}
	want("after the refund gave 3 back", 10)
}
