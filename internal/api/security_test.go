package api_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/auth"
	"tix/internal/ticketing"
)

// countingKeys is the real key store, counting the calls that reach DynamoDB.
type countingKeys struct {
	api.KeyStore
	lookups, admits atomic.Int64
	seen            func(counter string) // when set, told every counter counted on
}

func (c *countingKeys) LookupKey(ctx context.Context, hash string) (*auth.Key, error) {
	c.lookups.Add(1)
	return c.KeyStore.LookupKey(ctx, hash)
}

func (c *countingKeys) CountRequest(ctx context.Context, counter string, limit int, until time.Time) (int, bool, error) {
	c.admits.Add(1)
	if c.seen != nil {
		c.seen(counter)
	}
	return c.KeyStore.CountRequest(ctx, counter, limit, until)
}

func (h *harness) countKeys() *countingKeys {
	c := &countingKeys{KeyStore: h.st.Keys}
	h.srv.Keys = c
	h.handler = h.srv.Handler()
	return c
}

// A request that fails the key's own rules spends nothing of its budget: a
// visitor from another origin cannot lock a storefront's pk key out, and a
// leaked sk key with an IP allow-list cannot have its budget burned from outside.
func TestAuth_BudgetIsChargedOnlyAfterEveryCheck(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	h.srv.Limits.ReadsPerWindow = 3
	h.srv.Limits.IPReadsPerWindow = 3
	keys := h.countKeys()
	pk, _ := h.key(orgA, auth.Publishable, withOrigins("https://shop.example"))
	sk, _ := h.key(orgA, auth.Secret, withIPs("10.0.0.0/8"))
	narrow, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeEventsRead))

	for range 10 {
		wantError(t, h.get("/v1/events", pk, header("Origin", "https://evil.example")), 403, "origin_not_allowed", "origin")
		wantError(t, h.get("/v1/events", pk), 403, "origin_not_allowed", "origin")
		wantError(t, h.get("/v1/orders", pk, header("Origin", "https://shop.example")), 403, "forbidden", "")
		wantError(t, h.get("/v1/events", sk, remoteAddr("192.0.2.1:5000")), 403, "ip_not_allowed", "ip")
		wantError(t, h.get("/v1/events/evt_theatre/seating", narrow), 403, "insufficient_scope", "scope")
	}
	if n := keys.admits.Load(); n != 0 {
		t.Fatalf("%d budget charges for requests that failed the key's checks", n)
	}
	for _, c := range []struct {
		name   string
		secret string
		opts   []reqOpt
	}{
		{"pk from its origin", pk, []reqOpt{header("Origin", "https://shop.example")}},
		{"sk from its allow-list", sk, []reqOpt{remoteAddr("10.1.1.1:5000")}},
		{"sk with the scope", narrow, nil},
	} {
		r := h.get("/v1/events", c.secret, c.opts...)
		wantStatus(t, r, 200)
		if got := r.Header.Get("X-RateLimit-Remaining"); got != "2" {
			t.Errorf("%s: remaining %q after refused requests, want 2 (a full budget less this request)", c.name, got)
		}
	}
}

// Unknown, revoked and expired keys write nothing; an unknown key is read once
// and then remembered, so random keys cost neither a write nor repeated reads.
func TestAuth_BadKeysWriteNothingAndUnknownKeysAreCachedAsMissing(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	keys := h.countKeys()
	revoked, rk := h.key(orgA, auth.Secret)
	if _, err := h.st.Keys.RevokeKey(context.Background(), rk.ID, t0); err != nil {
		t.Fatal(err)
	}
	expired, _ := h.key(orgA, auth.Secret, withExpiry(t0.Add(-time.Second)))
	unknown := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	for range 5 {
		for _, k := range []string{unknown, revoked, expired} {
			wantError(t, h.get("/v1/events", k), 401, "unauthorized", "")
		}
	}
	if n := keys.admits.Load(); n != 0 {
		t.Fatalf("%d budget writes for unknown, revoked or expired keys", n)
	}
	if n := keys.lookups.Load(); n != 3 {
		t.Fatalf("%d key reads for 15 requests with 3 bad keys, want 3 (one per key, then cached)", n)
	}
	// Past the miss TTL the unknown key is read again.
	h.clk.Advance(api.DefaultLimits.KeyMissTTL)
	wantError(t, h.get("/v1/events", unknown), 401, "unauthorized", "")
	if n := keys.lookups.Load(); n != 4 {
		t.Fatalf("%d key reads after the miss TTL, want 4", n)
	}
}

// A revoked key is refused within the key cache's lifetime (TIX_KEY_CACHE_TTL,
// the documented revocation delay): requests never write the key's item, so
// nothing but the cache stands between a revocation and a process that read
// the key. Refused, it writes nothing.
func TestAuth_RevokedKeyIsRefusedWithinTheKeyCacheTTL(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	keys := h.countKeys()
	sk, k := h.key(orgA, auth.Secret)
	for range 3 {
		wantStatus(t, h.get("/v1/events", sk), 200)
	}
	if n := keys.lookups.Load(); n != 1 {
		t.Fatalf("%d key reads for 3 requests within the cache TTL, want 1", n)
	}
	ttl := h.srv.Limits.KeyCacheTTL
	h.clk.Advance(ttl / 2)
	revokedAt := h.clk.Now()
	if _, err := h.st.Keys.RevokeKey(context.Background(), k.ID, revokedAt); err != nil {
		t.Fatal(err)
	}
	// Inside the delay this process may still accept the key it cached.
	wantStatus(t, h.get("/v1/events", sk), 200)
	h.clk.Advance(ttl / 2)
	if d := h.clk.Now().Sub(revokedAt); d > ttl {
		t.Fatalf("test waited %v after the revocation, more than the %v delay", d, ttl)
	}
	charged := keys.admits.Load()
	wantError(t, h.get("/v1/events", sk), 401, "unauthorized", "")
	wantError(t, h.get("/v1/events", sk), 401, "unauthorized", "")
	if n := keys.admits.Load(); n != charged {
		t.Fatalf("a revoked key made %d rate-limit writes", n-charged)
	}
}

// countingHealth counts the database probes of GET /health.
type countingHealth struct {
	api.HealthChecker
	n atomic.Int64
}

func (c *countingHealth) Ping(ctx context.Context) error {
	c.n.Add(1)
	return c.HealthChecker.Ping(ctx)
}

func TestHealth_ProbeIsCachedForAFewSeconds(t *testing.T) {
	h := newHarness(t)
	probes := &countingHealth{HealthChecker: h.st}
	h.srv.Health = probes
	h.handler = h.srv.Handler()
	for range 20 {
		wantStatus(t, h.do("GET", "/v1/health", ""), 200)
	}
	if n := probes.n.Load(); n != 1 {
		t.Fatalf("20 health checks probed DynamoDB %d times, want 1", n)
	}
	h.clk.Advance(api.DefaultLimits.HealthCacheTTL)
	wantStatus(t, h.do("GET", "/v1/health", ""), 200)
	if n := probes.n.Load(); n != 2 {
		t.Fatalf("after the cache TTL: %d probes, want 2", n)
	}
}
