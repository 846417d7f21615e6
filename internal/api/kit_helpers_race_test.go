package api_test

import (
	"net/http"
	"sync"
	"testing"

	"tix/internal/auth"
)

// race runs n calls of f at once (parallel) and counts the answers by status.
func race(n int, f func(i int) response) map[int]int {
	var mu sync.Mutex
	got := map[int]int{}
	parallel(n, n, func(i int) {
		r := f(i)
		mu.Lock()
		got[r.StatusCode]++
		mu.Unlock()
	})
	return got
}

// Each test helper raced by copies of itself does its work once. Expiry has
// one winner (the others 409). A late payment or a refund settlement raced by
// copies of itself is the same bank event arriving twice: every copy may
// answer 200 with the resulting order, or 409 once it is decided, but the
// stock moves once and the order ends in one state.
func TestTestHelpers_RacedByThemselvesActOnce(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	left := func() int64 { return num(t, h.tierAvailability(sk, "evt_concert", "evt_concert_ga"), "qty_available") }
	start := left()
	id := h.mustOrder(sk, "race", gaBody("evt_concert_ga", 2))["id"].(string)
	if l := left(); l != start-2 {
		t.Fatalf("after the order: %d left, want %d", l, start-2)
	}
	const n = 8
	post := func(path, body string) func(int) response {
		return func(int) response { return h.post("/v1/test-helpers/orders/"+id+path, sk, body) }
	}
	want := func(what string, got map[int]int, winners int) {
		t.Helper()
		if got[http.StatusOK] < 1 || got[http.StatusOK]+got[http.StatusConflict] != n || winners > 0 && got[http.StatusOK] != winners {
			t.Fatalf("%d racing %s: %v", n, what, got)
		}
	}

	want("expiries", race(n, post("/expire", "")), 1)
	if l := left(); l != start {
		t.Errorf("after the expiry: %d left, want %d (the stock given back once)", l, start)
	}
	want("late payments", race(n, post("/late-payment", "")), 0)
	o := h.get("/v1/orders/"+id, sk).json(t)
	tickets, _ := h.get("/v1/orders/"+id+"/tickets", sk).json(t)["tickets"].([]any)
	if o["status"] != "paid" || o["late_payment"] == nil || len(tickets) != 2 {
		t.Fatalf("after the late payments: %v, %d tickets", o, len(tickets))
	}
	if l := left(); l != start-2 {
		t.Errorf("after the late payment: %d left, want %d (taken once)", l, start-2)
	}
	wantStatus(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusOK)
	want("refund settlements", race(n, post("/refund-outcome", `{"outcome":"settle"}`)), 0)
	if o := h.get("/v1/orders/"+id, sk).json(t); o["status"] != "refunded" {
		t.Fatalf("after the settlements: %v", o)
	}
}

// Expiring a hold with the helper while an order is created from it: the
// hold either becomes the order or expires, never both, and the seat ends
// sold or free accordingly.
func TestTestHelpers_HoldExpiryRacingItsOrder(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	for i, seat := range []string{"seat_B1", "seat_B2", "seat_B3", "seat_B4", "seat_B5"} {
		rids := reservationIDs(h.mustHold(sk, holdBody("evt_theatre", seat)))
		got := race(2, func(j int) response {
			if j == 0 {
				return h.post("/v1/test-helpers/seat-holds/expire", sk, releaseBody(rids...))
			}
			return h.post("/v1/orders", sk, seatOrder(rids...), idem("race-"+seat))
		})
		ordered, expired := got[http.StatusCreated] == 1, got[http.StatusOK] == 1
		if ordered == expired || got[http.StatusCreated]+got[http.StatusOK] != 1 {
			t.Fatalf("round %d: %v, want exactly one of the order (201) and the expiry (200)", i, got)
		}
		status := h.seatStatuses(sk)[seat]
		if ordered && status != "unavailable" || expired && status != "available" {
			t.Errorf("round %d: ordered %v, expired %v, seat %s is %s", i, ordered, expired, seat, status)
		}
	}
}
