package api_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/auth"
	"tix/internal/store"
	"tix/internal/ticketing"
)

func TestAuth_401ForEveryBadKey(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	revoked, rk := h.key(orgA, auth.Secret)
	if _, err := h.st.Keys.RevokeKey(context.Background(), rk.ID, t0); err != nil {
		t.Fatal(err)
	}
	expired, _ := h.key(orgA, auth.Secret, withExpiry(t0.Add(-time.Second)))
	cases := map[string][]reqOpt{
		"missing":           nil,
		"not bearer":        {header("Authorization", "Basic abc")},
		"empty bearer":      {header("Authorization", "Bearer ")},
		"malformed":         {bearer("sk_test_short")},
		"wrong environment": {bearer("sk_prod_" + "abcdefghijklmnopqrstuvwxyz012345")},
		"unknown":           {bearer(auth.NewSecret(auth.Secret, ticketing.EnvTest))},
		"revoked":           {bearer(revoked)},
		"expired":           {bearer(expired)},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			wantError(t, h.do("GET", "/v1/events", "", opts...), 401, "unauthorized", "")
		})
	}
}

func TestAuth_ScopesOriginsAndIPs(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	noSeating, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeEventsRead))
	pk, _ := h.key(orgA, auth.Publishable, withOrigins("http://localhost:3000"))
	ipKey, _ := h.key(orgA, auth.Secret, withIPs("10.0.0.0/8", "2001:db8::1"))

	t.Run("missing scope is 403 insufficient_scope", func(t *testing.T) {
		wantError(t, h.get("/v1/events/evt_theatre/seating", noSeating), 403, "insufficient_scope", "scope")
		wantStatus(t, h.get("/v1/events/evt_theatre", noSeating), 200)
	})
	t.Run("ping needs no scope", func(t *testing.T) {
		k, _ := h.key(orgA, auth.Secret, withScopes())
		r := h.get("/v1/ping", k)
		wantStatus(t, r, 200)
		if p := r.json(t); p["key_type"] != "sk" || p["environment"] != "test" || p["livemode"] != false || p["organizer_id"] != orgA || p["api_version"] != "2026-06-01" {
			t.Fatalf("ping: %s", r.body)
		}
	})
	t.Run("pk from its origin works", func(t *testing.T) {
		r := h.get("/v1/events", pk, header("Origin", "http://localhost:3000"))
		wantStatus(t, r, 200)
		if r.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
			t.Errorf("CORS header %q", r.Header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("pk from another origin is 403 origin_not_allowed", func(t *testing.T) {
		wantError(t, h.get("/v1/events", pk, header("Origin", "https://evil.example")), 403, "origin_not_allowed", "origin")
	})
	t.Run("pk without an origin is 403 origin_not_allowed", func(t *testing.T) {
		wantError(t, h.get("/v1/events", pk), 403, "origin_not_allowed", "origin")
	})
	t.Run("sk IP allow-list uses the source address", func(t *testing.T) {
		wantStatus(t, h.get("/v1/events", ipKey, remoteAddr("10.1.2.3:5000")), 200)
		wantStatus(t, h.get("/v1/events", ipKey, remoteAddr("[2001:db8::1]:5000")), 200)
		// API Gateway reports the source IP without a port.
		wantStatus(t, h.get("/v1/events", ipKey, remoteAddr("10.9.9.9")), 200)
		wantError(t, h.get("/v1/events", ipKey, remoteAddr("192.0.2.1:5000")), 403, "ip_not_allowed", "ip")
	})
	t.Run("X-Forwarded-For is never trusted", func(t *testing.T) {
		wantError(t, h.get("/v1/events", ipKey, remoteAddr("192.0.2.1:5000"), header("X-Forwarded-For", "10.1.1.1")), 403, "ip_not_allowed", "ip")
	})
	t.Run("CORS preflight is answered without a key", func(t *testing.T) {
		r := h.do("OPTIONS", "/v1/events", "", header("Origin", "http://localhost:3000"), header("Access-Control-Request-Method", "GET"),
			header("Access-Control-Request-Headers", "authorization"))
		wantStatus(t, r, 204)
		if r.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || r.Header.Get("Access-Control-Allow-Headers") == "" {
			t.Errorf("preflight headers: %v", r.Header)
		}
	})
	t.Run("tenancy: another organizer's key sees none of ours", func(t *testing.T) {
		other, _ := h.key(orgB, auth.Secret)
		r := h.get("/v1/events", other)
		if got := ids(t, r); len(got) != 1 || got[0] != "evt_other" {
			t.Fatalf("org B sees %v", got)
		}
	})
}

func TestRouting_UnknownRouteAndWrongMethodUseTheEnvelope(t *testing.T) {
	h := newHarness(t)
	sk, _ := h.key(orgA, auth.Secret)
	wantError(t, h.get("/v1/nope", sk), 404, "not_found", "")
	wantError(t, h.get("/v2/events", sk), 404, "not_found", "")
	r := h.do("POST", "/v1/events", "{}", bearer(sk))
	wantError(t, r, 405, "method_not_allowed", "")
	if r.Header.Get("Allow") == "" {
		t.Error("405 without Allow")
	}
	if r.Header.Get("Tix-Version") != "2026-06-01" {
		t.Errorf("Tix-Version %q", r.Header.Get("Tix-Version"))
	}
}

func TestRateLimit_429WithHeadersWhenTheBudgetIsSpent(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	h.srv.Limits.ReadsPerWindow = 3
	h.handler = h.srv.Handler()
	sk, _ := h.key(orgA, auth.Secret)
	for i := 0; i < 3; i++ {
		r := h.get("/v1/events/evt_concert", sk)
		wantStatus(t, r, 200)
		if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(2-i) {
			t.Errorf("request %d: remaining %q, want %d", i+1, got, 2-i)
		}
		if r.Header.Get("X-RateLimit-Limit") != "3" || r.Header.Get("X-RateLimit-Reset") == "" {
			t.Errorf("headers: %v", r.Header)
		}
	}
	r := h.get("/v1/events/evt_concert", sk)
	wantError(t, r, 429, "rate_limited", "")
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429 remaining %q", r.Header.Get("X-RateLimit-Remaining"))
	}
	// The next window has a fresh budget.
	h.clk.Advance(time.Minute)
	wantStatus(t, h.get("/v1/events/evt_concert", sk), 200)
}

func TestHealth_UpAndDown(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/health", "")
	wantStatus(t, r, 200)
	body := r.json(t)
	if body["status"] != "ok" || body["db"] != "up" || body["version"] != "2026-06-01" {
		t.Fatalf("health: %s", r.body)
	}
	if _, ok := body["response_time_ms"].(float64); !ok {
		t.Errorf("response_time_ms missing: %s", r.body)
	}
	if r.Header.Get("Tix-Request-Id") != "" || r.Header.Get("X-RateLimit-Limit") != "" {
		t.Errorf("health carries request id or rate-limit headers: %v", r.Header)
	}
	down, err := store.Open(context.Background(), store.Options{Table: "tix", Region: "us-east-1", Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	srv := &api.Server{Keys: down.Keys, Health: down, Limits: api.DefaultLimits}
	h.handler = srv.Handler()
	r = h.do("GET", "/v1/health", "")
	wantStatus(t, r, http.StatusServiceUnavailable)
	if body := r.json(t); body["status"] != "degraded" || body["db"] != "down" {
		t.Fatalf("health down: %s", r.body)
	}
}

func TestOpenAPI_ServedWithoutKey(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/openapi.json", "")
	wantStatus(t, r, 200)
	if doc := r.json(t); doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %v", doc["openapi"])
	}
}
