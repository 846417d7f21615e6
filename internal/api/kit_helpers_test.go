package api_test

import (
	"net/http"
	"testing"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// The test helpers make the future happen now through the real paths, for
// sk_test keys only: a pending order expires, a cancelled one is paid late
// (reinstated), a pending refund settles, held seats expire. Live keys get
// 422 unsupported, publishable keys 403, wrong states 409.
func TestTestHelpers_NowInsteadOfWaiting(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	live, _ := h.key(orgA, auth.Secret, withEnv(ticketing.EnvLive))
	pk := h.pkKey(orgA)
	order := func(key string) string { return h.mustOrder(sk, key, gaBody("evt_concert_ga", 1))["id"].(string) }

	id := order("expire")
	r := h.post("/v1/test-helpers/orders/"+id+"/expire", sk, "")
	wantStatus(t, r, http.StatusOK)
	if o := r.json(t); o["status"] != "cancelled" {
		t.Fatalf("expired: %s", r.body)
	}
	wantError(t, h.post("/v1/test-helpers/orders/"+id+"/expire", sk, ""), http.StatusConflict, "conflict", "")
	r = h.post("/v1/test-helpers/orders/"+id+"/late-payment", sk, "")
	wantStatus(t, r, http.StatusOK)
	if o := r.json(t); o["status"] != "paid" || o["late_payment"] == nil {
		t.Fatalf("late payment of an expired order: %s", r.body)
	}
	pending := order("late")
	r = h.post("/v1/test-helpers/orders/"+pending+"/late-payment", sk, "")
	wantStatus(t, r, http.StatusOK)
	if o := r.json(t); o["status"] != "paid" || o["late_payment"] == nil {
		t.Fatalf("late payment of a pending order: %s", r.body)
	}

	wantError(t, h.post("/v1/test-helpers/orders/"+id+"/refund-outcome", sk, `{"outcome":"settle"}`), http.StatusConflict, "conflict", "")
	wantStatus(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusOK)
	wantError(t, h.post("/v1/test-helpers/orders/"+id+"/refund-outcome", sk, `{"outcome":"fail"}`), http.StatusUnprocessableEntity, "unsupported", "")
	wantError(t, h.post("/v1/test-helpers/orders/"+id+"/refund-outcome", sk, `{"outcome":"later"}`), http.StatusBadRequest, "invalid_request", "outcome")
	r = h.post("/v1/test-helpers/orders/"+id+"/refund-outcome", sk, `{"outcome":"settle"}`)
	wantStatus(t, r, http.StatusOK)
	if o := r.json(t); o["status"] != "refunded" {
		t.Fatalf("settled: %s", r.body)
	}

	hold := h.mustHold(sk, holdBody("evt_theatre", "seat_A1"))
	rids := reservationIDs(hold)
	wantStatus(t, h.post("/v1/test-helpers/seat-holds/expire", sk, releaseBody(rids...)), http.StatusOK)
	wantError(t, h.post("/v1/seat-holds/extend", sk, releaseBody(rids...)), http.StatusGone, "hold_expired", "")
	wantError(t, h.post("/v1/test-helpers/seat-holds/expire", sk, releaseBody(rids...)), http.StatusGone, "hold_expired", "")
	h.mustHold(sk, holdBody("evt_theatre", "seat_A1")) // the seat is free again

	other := order("other")
	wantError(t, h.post("/v1/test-helpers/orders/"+other+"/expire", live, ""), http.StatusUnprocessableEntity, "unsupported", "")
	wantError(t, h.post("/v1/test-helpers/seat-holds/expire", live, releaseBody(rids...)), http.StatusUnprocessableEntity, "unsupported", "")
	wantError(t, h.post("/v1/test-helpers/orders/"+other+"/expire", pk, "", fromShop()), http.StatusForbidden, "forbidden", "")
}
