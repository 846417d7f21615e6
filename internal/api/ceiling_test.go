package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
)

// ceilingHits records what the router tells CeilingAlerts (the de-dupe and
// the email are internal/emailjobs', tested there).
type ceilingHits struct {
	mu   sync.Mutex
	hits []string
}

func (c *ceilingHits) CeilingHit(_ context.Context, org, keyID, bucket string, limit int, _ time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits = append(c.hits, fmt.Sprintf("%s %s %s %d", org, keyID, bucket, limit))
}

func (c *ceilingHits) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.hits...)
}

// A publishable key's ceiling is charged only by requests that pass
// validation: a hundred addresses sending junk (POST /orders {}, holds without
// seats, unknown query parameters) spend none of it, so buyers are still
// served; the junk costs each sender its own client budget. Valid requests
// past the ceiling are refused for everyone, and the owner is alerted.
func TestRateLimit_PKCeilingChargedOnlyByValidRequests(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	hits := &ceilingHits{}
	h.srv.CeilingAlerts = hits
	pk, k := h.key(orgA, auth.Publishable, withOrigins(shopOrigin))
	if _, err := h.st.Keys.SetKeyRateLimits(context.Background(), k.ID, budget(auth.RateLimits{Reads: 5, Writes: 5, IPWrites: 3})); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		from := remoteAddr(addr(i))
		wantError(t, h.post("/v1/orders", pk, `{}`, idem(fmt.Sprintf("junk-%d", i)), fromShop(), from), http.StatusBadRequest, "invalid_request", "buyer")
		if i%10 == 0 {
			wantError(t, h.post("/v1/seat-holds", pk, `{"event_id":"evt_theatre"}`, fromShop(), from), http.StatusBadRequest, "invalid_request", "seat_ids")
			wantError(t, h.del("/v1/seat-holds", pk, `{"reservation_ids":[""]}`, fromShop(), from), http.StatusBadRequest, "invalid_request", "reservation_ids[0]")
			wantError(t, h.post("/v1/orders/preview", pk, `{}`, fromShop(), from), http.StatusBadRequest, "invalid_request", "tier_id")
			wantError(t, h.get("/v1/events?nope=1", pk, fromShop(), from), http.StatusBadRequest, "invalid_request", "nope")
		}
	}
	if got := hits.all(); len(got) != 0 {
		t.Fatalf("junk hit the ceiling: %v", got)
	}
	// Junk still costs its sender: a client's own budget (3 writes here).
	for i := range 4 {
		r := h.post("/v1/orders", pk, `{}`, idem(fmt.Sprintf("one-%d", i)), fromShop(), remoteAddr("198.51.100.50:1"))
		if i < 3 {
			wantStatus(t, r, http.StatusBadRequest)
		} else {
			wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
			if !strings.Contains(string(r.body), "from this client") {
				t.Errorf("junk refused by %s", r.body)
			}
		}
	}
	// Buyers are served: five valid orders (the ceiling), from five addresses.
	for i := range 5 {
		h.mustOrder(pk, fmt.Sprintf("buyer-%d", i), gaBody("evt_concert_ga", 1), fromShop(), remoteAddr(addr(1000+i)))
	}
	r := h.post("/v1/orders", pk, gaBody("evt_concert_ga", 1), idem("buyer-6"), fromShop(), remoteAddr(addr(2000)))
	wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
	if !strings.Contains(string(r.body), "all of its clients together") || r.Header.Get("X-RateLimit-Limit") != "5" || r.Header.Get("Retry-After") == "" {
		t.Errorf("refused past the ceiling: %v %s", r.Header, r.body)
	}
	if got := hits.all(); len(got) != 1 || got[0] != orgA+" "+k.ID+" write 5" {
		t.Errorf("ceiling hits told: %v", got)
	}
	// Reads likewise: the junk reads above spent nothing of the read ceiling.
	for i := range 5 {
		wantStatus(t, h.get("/v1/events", pk, fromShop(), remoteAddr(addr(3000+i))), http.StatusOK)
	}
	wantError(t, h.get("/v1/events", pk, fromShop(), remoteAddr(addr(4000))), http.StatusTooManyRequests, "rate_limited", "")
}

// Requests with a poll token instead of a key have a budget per client
// network, charged before the token is checked: nobody reads order statuses,
// or tries tokens, unboundedly. 429 carries the usual headers.
func TestPollToken_ReadsBudgetedPerClientNetwork(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	h.srv.Limits.PollReadsPerWindow = 3
	sk, _ := h.key(orgA, auth.Secret)
	o := h.mustOrder(sk, "poll-budget", gaBody("evt_concert_ga", 1))
	id, tok := o["id"].(string), o["poll_token"].(string)
	for i := range 3 {
		r := h.do("GET", "/v1/orders/"+id+"?poll_token="+tok, "")
		wantStatus(t, r, http.StatusOK)
		if r.Header.Get("X-RateLimit-Limit") != "3" || r.Header.Get("X-RateLimit-Remaining") != fmt.Sprint(2-i) {
			t.Errorf("poll %d: limit %q remaining %q", i, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))
		}
	}
	r := h.do("GET", "/v1/orders/"+id+"?poll_token="+tok, "")
	wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
	if r.Header.Get("Retry-After") == "" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429 headers: %v", r.Header)
	}
	// Every way of sending the token shares the budget; wrong tokens spend it too.
	wantError(t, h.do("POST", "/v1/orders/"+id+"/check-status", "", header("Tix-Poll-Token", tok)), http.StatusTooManyRequests, "rate_limited", "")
	other := remoteAddr("[2001:db8:5::1]:1")
	for range 3 {
		wantError(t, h.do("GET", "/v1/orders/"+id, "", bearer("pt_wrong"), other), http.StatusUnauthorized, "unauthorized", "")
	}
	wantError(t, h.do("GET", "/v1/orders/"+id, "", bearer(tok), remoteAddr("[2001:db8:5::2]:1")), http.StatusTooManyRequests, "rate_limited", "")
	// Another network has its own budget; a key is not charged on it; the next window admits again.
	wantStatus(t, h.do("GET", "/v1/orders/"+id, "", bearer(tok), remoteAddr("198.51.100.9:1")), http.StatusOK)
	wantStatus(t, h.get("/v1/orders/"+id, sk), http.StatusOK)
	h.clk.Advance(time.Minute)
	wantStatus(t, h.do("GET", "/v1/orders/"+id+"?poll_token="+tok, ""), http.StatusOK)
}
