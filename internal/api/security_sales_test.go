package api_test

import (
	"net/http"
	"testing"

	"tix/internal/auth"
)

// A publishable key's Idempotency-Keys live in their own namespace (the key and
// the client's network): a storefront visitor can neither replay an sk key's
// order (and read its poll_token) nor pre-claim its key, nor another visitor's.
func TestIdempotency_PublishableKeysCannotCollideWithSecretKeysOrOtherVisitors(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	body := gaBody("evt_concert_ga", 1)

	// An sk order, then the same key and body from a pk key: a new order, not the sk one.
	skOrder := h.mustOrder(sk, "shared-1", body)
	r := h.post("/v1/orders", pk, body, idem("shared-1"), fromShop())
	wantStatus(t, r, http.StatusCreated)
	if got := r.json(t); got["id"] == skOrder["id"] || got["poll_token"] == skOrder["poll_token"] {
		t.Fatalf("a pk request replayed the sk order: %s", r.body)
	}
	// A pk request first cannot block the sk key with a different body.
	h.mustOrder(pk, "shared-2", gaBody("evt_concert_ga", 2), fromShop())
	h.mustOrder(sk, "shared-2", body)
	// Two visitors of the same storefront on different networks do not share keys.
	visitorA := h.mustOrder(pk, "shared-3", body, fromShop(), remoteAddr("198.51.100.7:5000"))
	r = h.post("/v1/orders", pk, body, idem("shared-3"), fromShop(), remoteAddr("203.0.113.9:5000"))
	wantStatus(t, r, http.StatusCreated)
	if r.json(t)["id"] == visitorA["id"] {
		t.Fatal("another visitor's network replayed visitor A's order")
	}
	// The same visitor's retry is still a replay, also from another address of its IPv6 /64.
	again := h.post("/v1/orders", pk, body, idem("shared-3"), fromShop(), remoteAddr("198.51.100.7:5001"))
	wantStatus(t, again, http.StatusOK)
	if again.json(t)["id"] != visitorA["id"] {
		t.Fatal("the visitor's own retry was not a replay")
	}
	v6 := h.mustOrder(pk, "shared-4", body, fromShop(), remoteAddr("[2001:db8:1:2::10]:5000"))
	again = h.post("/v1/orders", pk, body, idem("shared-4"), fromShop(), remoteAddr("[2001:db8:1:2:aaaa::1]:5000"))
	wantStatus(t, again, http.StatusOK)
	if again.json(t)["id"] != v6["id"] {
		t.Fatal("a retry from the same IPv6 /64 was not a replay")
	}

	// Seat holds: an sk hold's key replayed by a pk request is a new hold attempt, not the sk hold.
	skHold := h.post("/v1/seat-holds", sk, holdBody("evt_theatre", "seat_A1"), idem("hold-1"))
	wantStatus(t, skHold, http.StatusOK)
	r = h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_A1"), idem("hold-1"), fromShop())
	wantError(t, r, http.StatusConflict, "seat_conflict", "seat_ids[0]")
	// And a pk hold under a key does not block the sk key.
	h.mustHold(pk, holdBody("evt_theatre", "seat_A2"), idem("hold-2"), fromShop())
	h.mustHold(sk, holdBody("evt_theatre", "seat_A3"), idem("hold-2"))
}
