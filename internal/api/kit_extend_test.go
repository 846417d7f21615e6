package api_test

import (
	"net/http"
	"testing"
	"time"

	"tix/internal/auth"
)

// A storefront extends its buyer's hold while the buyer is still paying: 5
// more minutes each time up to 30 minutes in all, then 409; from another
// client the hold is not found; once expired, 410 hold_expired.
func TestExtendHold_StorefrontUpToTheMaximum(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	hold := h.mustHold(pk, holdBody("evt_theatre", "seat_A1", "seat_A2"), fromShop())
	rids := reservationIDs(hold)
	extend := func(secret string, opts ...reqOpt) response {
		return h.post("/v1/seat-holds/extend", secret, releaseBody(rids...), opts...)
	}
	created := t0
	for i, want := range []time.Duration{20, 25, 30} {
		r := extend(pk, fromShop())
		wantStatus(t, r, http.StatusOK)
		if got := r.json(t); got["expires_at"] != created.Add(want*time.Minute).Format(time.RFC3339) || got["hold_id"] != hold["hold_id"] {
			t.Fatalf("extension %d: %s, want expires_at +%dm", i+1, r.body, want)
		}
	}
	wantError(t, extend(pk, fromShop()), http.StatusConflict, "conflict", "")
	wantError(t, extend(pk, fromShop(), remoteAddr("198.51.100.7:5000")), http.StatusNotFound, "not_found", "reservation_ids[0]")
	wantError(t, h.post("/v1/seat-holds/extend", pk, `{"reservation_ids":[]}`, fromShop()), http.StatusBadRequest, "invalid_request", "reservation_ids")
	wantError(t, h.post("/v1/seat-holds/extend", pk, `{"reservation_ids":["x"],"more":1}`, fromShop()), http.StatusBadRequest, "invalid_request", "more")

	// Past the first expiry the seats are still held; past the maximum they are gone.
	h.clk.Set(created.Add(29 * time.Minute))
	wantError(t, h.post("/v1/seat-holds", sk, holdBody("evt_theatre", "seat_A1")), http.StatusConflict, "seat_conflict", "seat_ids[0]")
	h.clk.Set(created.Add(30 * time.Minute))
	wantError(t, extend(pk, fromShop()), http.StatusGone, "hold_expired", "")
	h.mustHold(sk, holdBody("evt_theatre", "seat_A1"))
}
