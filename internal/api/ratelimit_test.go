package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/auth"
)

const shop = "https://shop.example"

// instance is another function instance over the same table: its own key
// cache and its own memory of spent counters, as another Lambda would have.
func (h *harness) instance() http.Handler {
	s := &api.Server{Keys: h.srv.Keys, Health: h.srv.Health, Clock: h.srv.Clock,
		Catalog: h.srv.Catalog, Sales: h.srv.Sales, Limits: h.srv.Limits}
	return s.Handler()
}

// serveOn sends one GET through handler from the client address ip and checks
// the response against the OpenAPI document; safe for concurrent use.
func (h *harness) serveOn(handler http.Handler, target, secret, ip string, opts ...reqOpt) response {
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080"+target, nil)
	req.RemoteAddr = ip
	req.Header.Set("Authorization", "Bearer "+secret)
	for _, o := range opts {
		o(req)
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	h.oas.CheckResponse(h.t, req, res, b)
	return response{Response: res, body: b}
}

// parallel runs f(0..n-1) on workers goroutines.
func parallel(n, workers int, f func(i int)) {
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
}

func budget(rl auth.RateLimits) func(auth.Key) (*auth.RateLimits, error) {
	return func(auth.Key) (*auth.RateLimits, error) { return &rl, nil }
}

func addr(i int) string { return fmt.Sprintf("10.%d.%d.%d:40000", i>>16&255, i>>8&255, i&255) }

// 2,000 buyers behind one storefront pk key, each from its own address, are
// each admitted within their own budget (1 request, to keep the test fast),
// while one abusive client (rotating
// addresses inside its IPv6 /64) is refused with 429 past its own, without
// touching anyone else's; its flood costs one refused write per instance.
func TestRateLimit_2000ClientsBehindOnePKKeyEachGetTheirOwnBudget(t *testing.T) {
	h := newHarness(t)
	h.srv.Limits.IPReadsPerWindow = 1
	keys := h.countKeys()
	pk, _ := h.key(orgA, auth.Publishable, withOrigins(shop))
	const clients = 2000
	var bad atomic.Int64
	var mu sync.Mutex
	problems := map[string]int{}
	parallel(clients, 32, func(i int) {
		r := h.serveOn(h.handler, "/v1/ping", pk, addr(i), header("Origin", shop))
		if r.StatusCode != 200 || r.Header.Get("X-RateLimit-Limit") != "1" || r.Header.Get("X-RateLimit-Remaining") != "0" {
			bad.Add(1)
			mu.Lock()
			problems[fmt.Sprintf("%d limit %s remaining %s", r.StatusCode, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))]++
			mu.Unlock()
		}
	})
	if bad.Load() > 0 {
		t.Fatalf("%d of %d clients were not admitted within their budget of 1 (want 200, limit 1, remaining 0): %v", bad.Load(), clients, problems)
	}

	// The abuser: 40 requests from 40 addresses of one /64, in parallel.
	before := keys.admits.Load()
	var admitted, refused atomic.Int64
	parallel(40, 8, func(i int) {
		r := h.serveOn(h.handler, "/v1/ping", pk, fmt.Sprintf("[2001:db8:1:2::%x]:40000", i+1), header("Origin", shop))
		switch {
		case r.StatusCode == 200:
			admitted.Add(1)
		case r.StatusCode == 429 && r.Header.Get("X-RateLimit-Limit") == "1" && r.Header.Get("X-RateLimit-Remaining") == "0" &&
			r.Header.Get("Retry-After") != "" && strings.Contains(string(r.body), "from this client"):
			refused.Add(1)
		default:
			t.Errorf("abusive client: %d %v %s", r.StatusCode, r.Header, r.body)
		}
	})
	if admitted.Load() != 1 || refused.Load() != 39 {
		t.Fatalf("abusive client: %d admitted, %d refused; want 1 and 39", admitted.Load(), refused.Load())
	}
	// 1 admitted (client and ceiling) and the refused ones that raced before
	// this process learnt the client's item was spent (one per worker at most).
	if n := keys.admits.Load() - before; n > 2+8 {
		t.Errorf("the abusive client's 40 requests made %d counter writes, want at most 10", n)
	}
	// Everyone else still has their budget... and the next window a fresh one.
	wantStatus(t, h.serveOn(h.handler, "/v1/ping", pk, addr(clients+1), header("Origin", shop)), 200)
	h.clk.Advance(time.Minute)
	wantStatus(t, h.serveOn(h.handler, "/v1/ping", pk, "[2001:db8:1:2::ffff]:40000", header("Origin", shop)), 200)
}

// A pk key's ceiling (all clients together) refuses past the operator's
// figure, and raising it takes effect within the key cache's lifetime, in the
// same window.
func TestRateLimit_PKCeilingRefusesPastTheOperatorsCeiling(t *testing.T) {
	h := newHarness(t)
	pk, k := h.key(orgA, auth.Publishable, withOrigins(shop))
	ctx := context.Background()
	if _, err := h.st.Keys.SetKeyRateLimits(ctx, k.ID, budget(auth.RateLimits{Reads: 5})); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		r := h.serveOn(h.handler, "/v1/ping", pk, addr(i), header("Origin", shop))
		if i < 5 {
			wantStatus(t, r, 200)
			if got := r.Header.Get("X-RateLimit-Limit") + "/" + r.Header.Get("X-RateLimit-Remaining"); i == 4 && got != "5/0" {
				t.Errorf("last request under the ceiling: limit/remaining %s, want 5/0 (the ceiling is the tighter budget)", got)
			}
			continue
		}
		wantError(t, r, 429, "rate_limited", "")
		if r.Header.Get("X-RateLimit-Limit") != "5" || !strings.Contains(string(r.body), "all of its clients together") {
			t.Errorf("refused by the ceiling: limit %q, body %s", r.Header.Get("X-RateLimit-Limit"), r.body)
		}
	}
	if _, err := h.st.Keys.SetKeyRateLimits(ctx, k.ID, budget(auth.RateLimits{Reads: 10})); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(h.srv.Limits.KeyCacheTTL)
	for i := range 5 {
		wantStatus(t, h.serveOn(h.handler, "/v1/ping", pk, addr(100+i), header("Origin", shop)), 200)
	}
	wantError(t, h.serveOn(h.handler, "/v1/ping", pk, addr(200), header("Origin", shop)), 429, "rate_limited", "")
}

// A key's budget spread over shards admits exactly the budget in a window
// across several instances counting at once, over more than one item; a
// refused request costs nothing once its instance knows every shard spent.
func TestRateLimit_ShardedKeyBudgetIsExactAcrossInstances(t *testing.T) {
	h := newHarness(t)
	h.srv.Limits.ReadsPerWindow = 40
	h.srv.Limits.Window = time.Second
	h.srv.Limits.ShardRate = 5 // 40 a second at 5 a shard: 8 shards of 5
	keys := h.countKeys()
	var counters sync.Map
	keys.seen = func(counter string) { counters.Store(counter, true) }
	sk, _ := h.key(orgA, auth.Secret)
	instances := []http.Handler{h.instance(), h.instance(), h.instance(), h.instance()}
	var admitted, refused atomic.Int64
	parallel(120, 16, func(i int) {
		r := h.serveOn(instances[i%len(instances)], "/v1/ping", sk, "192.0.2.10:40000")
		switch r.StatusCode {
		case 200:
			admitted.Add(1)
		case 429:
			refused.Add(1)
		default:
			t.Errorf("status %d: %s", r.StatusCode, r.body)
		}
	})
	if admitted.Load() != 40 || refused.Load() != 80 {
		t.Fatalf("%d admitted, %d refused; want exactly 40 admitted of 120", admitted.Load(), refused.Load())
	}
	n := 0
	counters.Range(func(any, any) bool { n++; return true })
	if n != 8 {
		t.Errorf("the budget was counted on %d items, want 8 shards", n)
	}
	before := keys.admits.Load()
	for _, in := range instances {
		wantError(t, h.serveOn(in, "/v1/ping", sk, "192.0.2.10:40000"), 429, "rate_limited", "")
	}
	if d := keys.admits.Load() - before; d != 0 {
		t.Errorf("refusals on a spent budget made %d counter writes, want 0", d)
	}
	h.clk.Advance(time.Second)
	wantStatus(t, h.serveOn(instances[0], "/v1/ping", sk, "192.0.2.10:40000"), 200)
}

// What authenticating costs in DynamoDB: measured with ReturnConsumedCapacity
// on DynamoDB Local. The key's item is only read (once per process per
// TIX_KEY_CACHE_TTL); an sk request counts once, a pk request twice (its
// client, the key's ceiling), each 1 write unit on a counter item; a flood
// past a budget costs one refused write per process and window.
func TestRateLimit_CostPerRequest(t *testing.T) {
	h := newHarness(t)
	h.srv.Limits.IPReadsPerWindow = 3
	keys := h.countKeys()
	sk, _ := h.key(orgA, auth.Secret)
	pk, _ := h.key(orgA, auth.Publishable, withOrigins(shop))
	measure := func(name, secret string, n int, wantWrites int64, opts ...reqOpt) {
		t.Helper()
		var log capacityLog
		h.st.OnCapacity(log.record)
		writes, reads := keys.admits.Load(), keys.lookups.Load()
		for range n {
			h.serveOn(h.handler, "/v1/ping", secret, "192.0.2.77:40000", opts...)
		}
		h.st.OnCapacity(nil)
		w, r := keys.admits.Load()-writes, keys.lookups.Load()-reads
		t.Logf("%-32s %2d requests: %2d counter writes (admitted ones %.0f write units), %d key reads (%.0f read units)",
			name, n, w, log.admitUnits, r, log.keyUnits)
		if w != wantWrites {
			t.Errorf("%s: %d counter writes, want %d", name, w, wantWrites)
		}
	}
	measure("sk, within its budget", sk, 10, 10)
	measure("pk, within its client's budget", pk, 3, 6, header("Origin", shop))
	measure("pk, client over budget (flood)", pk, 10, 1, header("Origin", shop))
}
