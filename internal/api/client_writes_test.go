package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/auth"
)

// A publishable key's order and hold creations from one client are held to
// api.MaxClientWritesPerSecond, however high the key's per-client budget:
// each is a transaction on the client's pending-order counter, one item,
// and its payment or release another. Here a window of 1 s and a budget of
// 1,000,000: the 26th creation of the second is refused, by the client's
// budget, and another client still creates.
func TestClientWrites_AtMostTheCountersHealthyRate(t *testing.T) {
	h := newHarness(t)
	h.srv.Limits.Window = time.Second
	pk, k := h.key(orgA, auth.Publishable, withOrigins(shopOrigin))
	if _, err := h.st.Keys.SetKeyRateLimits(context.Background(), k.ID, budget(auth.RateLimits{IPWrites: 1_000_000})); err != nil {
		t.Fatal(err)
	}
	for i := range api.MaxClientWritesPerSecond + 1 {
		r := h.post("/v1/orders", pk, `{}`, idem(fmt.Sprintf("cw-%d", i)), fromShop())
		if i < api.MaxClientWritesPerSecond {
			wantError(t, r, http.StatusBadRequest, "invalid_request", "buyer")
			continue
		}
		wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
		if got := r.Header.Get("X-RateLimit-Limit"); got != fmt.Sprint(api.MaxClientWritesPerSecond) {
			t.Errorf("X-RateLimit-Limit %q, want %d", got, api.MaxClientWritesPerSecond)
		}
	}
	wantError(t, h.post("/v1/orders", pk, `{}`, idem("cw-other"), fromShop(), remoteAddr("198.51.100.9:1")), http.StatusBadRequest, "invalid_request", "buyer")
}
