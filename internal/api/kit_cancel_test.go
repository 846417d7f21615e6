package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"tix/internal/auth"
)

// A storefront's buyer abandons three orders: the client is at its cap, the
// storefront cancels them with their poll tokens (the publishable key alone
// cannot), the places come back and the client may order again at once. A
// secret key cancels any pending order; anything not pending is 409.
func TestCancelOrder_StorefrontFreesItsClientAndStock(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	var ids, tokens []string
	for i := range 3 {
		o := h.mustOrder(pk, fmt.Sprintf("abandoned-%d", i), gaBody("evt_concert_ga", 1), fromShop())
		ids, tokens = append(ids, o["id"].(string)), append(tokens, o["poll_token"].(string))
	}
	wantError(t, h.post("/v1/orders", pk, gaBody("evt_concert_ga", 1), idem("fourth"), fromShop()), http.StatusTooManyRequests, "rate_limited", "")

	cancel := func(secret, id string, opts ...reqOpt) response {
		return h.post("/v1/orders/"+id+"/cancel", secret, "", opts...)
	}
	// The publishable key alone, or with another order's token: 401, nothing changes.
	wantError(t, cancel(pk, ids[0], fromShop()), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, cancel(pk, ids[0], fromShop(), header("Tix-Poll-Token", tokens[1])), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, h.post("/v1/orders/"+ids[0]+"/cancel", pk, `{"reason":"x"}`, fromShop(), header("Tix-Poll-Token", tokens[0])),
		http.StatusBadRequest, "invalid_request", "reason")
	for i, id := range ids {
		r := cancel(pk, id, fromShop(), header("Tix-Poll-Token", tokens[i]))
		wantStatus(t, r, http.StatusOK)
		if o := r.json(t); o["status"] != "cancelled" || o["is_paid"] != false || o["buyer"] != nil || num(t, o, "version") != 2 {
			t.Fatalf("cancelled by the storefront: %s", r.body)
		}
	}
	if a := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, a, "qty_sold") != 0 {
		t.Fatalf("stock after the cancels: %v", a)
	}
	again := h.mustOrder(pk, "after-cancel", gaBody("evt_concert_ga", 1), fromShop())

	// A secret key cancels without a token; a second cancel, a paid order and a
	// refunded one are 409; an unknown order 404.
	r := cancel(sk, again["id"].(string))
	wantStatus(t, r, http.StatusOK)
	if o := r.json(t); o["status"] != "cancelled" || o["buyer"] == nil {
		t.Fatalf("cancelled by the secret key: %s", r.body)
	}
	wantError(t, cancel(sk, again["id"].(string)), http.StatusConflict, "conflict", "")
	paid := h.mustOrder(sk, "paid", gaBody("evt_concert_ga", 1))
	h.mustPay(sk, paid["id"].(string))
	wantError(t, cancel(sk, paid["id"].(string)), http.StatusConflict, "conflict", "")
	wantError(t, cancel(sk, "ord_unknown0000000000000"), http.StatusNotFound, "not_found", "")
	if a := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, a, "qty_sold") != 1 {
		t.Fatalf("stock after the paid order: %v", a)
	}
}
