package api_test

import (
	"net/http"
	"strings"
	"testing"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// Every error envelope names, in doc_url, the section of /v1/docs/errors
// about its code, and that page has the section; the page has a section for
// every code the API answers with (the harness checks doc_url on every error
// any test reads).
func TestErrors_DocURLNamesTheCodesSection(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk, _ := h.key(orgA, auth.Publishable)
	page := h.do(http.MethodGet, "/v1/docs/errors", "")
	wantStatus(t, page, http.StatusOK)
	for _, c := range []struct {
		name string
		r    response
	}{
		{"not found", h.get("/v1/orders/ord_nope", sk)},
		{"bad query", h.get("/v1/order-events?limit=0", sk)},
		{"no key", h.get("/v1/orders/ord_nope", "")},
		{"pk on an sk route", h.get("/v1/order-events", pk)},
		{"method", h.do(http.MethodDelete, "/v1/ping", "")},
	} {
		code, _ := c.r.errorCode(t)
		if !strings.Contains(string(page.body), `<section id="`+code+`">`) {
			t.Errorf("%s: /v1/docs/errors has no section %q", c.name, code)
		}
	}
	for _, code := range []string{"invalid_request", "unauthorized", "forbidden", "insufficient_scope", "ip_not_allowed",
		"origin_not_allowed", "not_found", "method_not_allowed", "conflict", "order_cancelled", "order_pending",
		"seat_conflict", "sales_closed", "hold_expired", "unsupported", "rate_limited", "internal_error", "payment_provider_error"} {
		if !strings.Contains(string(page.body), `<section id="`+code+`">`) {
			t.Errorf("/v1/docs/errors has no section %q", code)
		}
	}
}

// A 404 for an order of the caller's organizer in the other environment says
// so; another organizer's order is a plain 404 (missing and foreign look the same).
func TestErrors_OrderInTheOtherModeSaysSo(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	skTest, _ := h.key(orgA, auth.Secret)
	skLive, _ := h.key(orgA, auth.Secret, withEnv(ticketing.EnvLive))
	skB, _ := h.key(orgB, auth.Secret)
	id := h.mustOrder(skTest, "other-mode", gaBody("evt_concert_ga", 1))["id"].(string)

	r := h.get("/v1/orders/"+id, skLive)
	wantError(t, r, http.StatusNotFound, "not_found", "")
	msg := r.json(t)["error"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "exists in test mode; this is a live key") {
		t.Errorf("live key on a test order: %q, want it to say the order exists in test mode", msg)
	}
	r = h.get("/v1/orders/"+id, skB)
	wantError(t, r, http.StatusNotFound, "not_found", "")
	if msg := r.json(t)["error"].(map[string]any)["message"].(string); strings.Contains(msg, "mode") || strings.Contains(msg, id) {
		t.Errorf("another organizer's key learnt about the order: %q", msg)
	}
}

// An unknown member of a nested object or of an array's object is named by
// its full path, through the real router.
func TestErrors_UnknownNestedFieldNamesItsPath(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	buyer := map[string]any{"email": "anna@example.com", "nmae": "Anna"}
	wantError(t, h.post("/v1/orders", sk, gaBody("evt_concert_ga", 1, "buyer", buyer), idem("path-1")),
		http.StatusBadRequest, "invalid_request", "buyer.nmae")
	items := []any{map[string]any{"tier_id": "tier_stand", "qty": 1}, map[string]any{"tier_id": "tier_stand", "qtyy": 1}}
	wantError(t, h.post("/v1/orders", sk, jsonBody("buyer", anna, "standing_items", items), idem("path-2")),
		http.StatusBadRequest, "invalid_request", "standing_items[1].qtyy")
}
