package api_test

import (
	"net/http"
	"strings"
	"testing"

	"tix/internal/auth"
)

// servers[0].url is the configured public URL (TIX_PUBLIC_URL) plus /v1, or
// the relative /v1 without one: never a host a request names. The document
// is public and cacheable, so a reflected X-Forwarded-Host would let anyone
// point every later reader's generated client (and its keys) at their host.
func TestOpenAPI_ServerURLIsTheConfiguredPublicURLNeverARequestHeader(t *testing.T) {
	h := newHarness(t)
	forged := []reqOpt{header("X-Forwarded-Host", "evil.example"), header("X-Forwarded-Proto", "https"),
		func(r *http.Request) { r.Host = "evil.example" }}
	serverURL := func(opts ...reqOpt) string {
		t.Helper()
		r := h.do("GET", "/v1/openapi.json", "", opts...)
		wantStatus(t, r, http.StatusOK)
		if v := r.Header.Values("Vary"); len(v) != 0 {
			t.Errorf("Vary %q: the document no longer depends on request headers", v)
		}
		servers, _ := r.json(t)["servers"].([]any)
		if len(servers) == 0 {
			t.Fatal("no servers")
		}
		url, _ := servers[0].(map[string]any)["url"].(string)
		return url
	}
	if got := serverURL(forged...); got != "/v1" {
		t.Errorf("no public URL configured, forged X-Forwarded-Host: servers[0].url %q, want the relative /v1", got)
	}
	h.srv.PublicURL = "https://api.tix.example"
	for _, opts := range [][]reqOpt{nil, forged} {
		if got := serverURL(opts...); got != "https://api.tix.example/v1" {
			t.Errorf("servers[0].url %q, want https://api.tix.example/v1 (the configured public URL)", got)
		}
	}
}

// GET /orders shows buyers' personal data: like GET /orders/{id}, no cache
// may keep it.
func TestOrders_ListIsNotStored(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	wantStatus(t, h.post("/v1/orders", sk, gaOrder("evt_concert_ga", 1), idem("list-nostore")), http.StatusCreated)
	r := h.get("/v1/orders", sk)
	wantStatus(t, r, http.StatusOK)
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("GET /v1/orders Cache-Control %q, want no-store", cc)
	}
}

// Routes only secret keys may call answer no page: no
// Access-Control-Allow-Origin on their responses, no allow headers on their
// preflight. The routes a publishable key or poll token may call still do.
func TestCORS_SecretKeyOnlyRoutesReflectNoOrigin(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk, _ := h.key(orgA, auth.Publishable, withOrigins(shopOrigin))
	origin := header("Origin", shopOrigin)
	preflight := func(target, method string) response {
		t.Helper()
		r := h.do("OPTIONS", target, "", origin, header("Access-Control-Request-Method", method),
			header("Access-Control-Request-Headers", "authorization"))
		wantStatus(t, r, http.StatusNoContent)
		return r
	}
	for _, c := range []struct{ method, target string }{
		{"GET", "/v1/orders"}, {"GET", "/v1/orders/ord_x/tickets"}, {"POST", "/v1/orders/ord_x/refund"},
		{"GET", "/v1/orders/ord_x/refund"}, {"POST", "/v1/orders/ord_x/simulate-payment"},
		{"GET", "/v1/webhook-endpoints"}, {"GET", "/v1/webhook-deliveries"}, {"POST", "/v1/webhook-deliveries/whd_x/redeliver"},
	} {
		r := preflight(c.target, c.method)
		for _, name := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"} {
			if v := r.Header.Get(name); v != "" {
				t.Errorf("preflight %s %s: %s %q, want none (secret keys only)", c.method, c.target, name, v)
			}
		}
		r = h.do(c.method, c.target, "", bearer(sk), origin)
		if v := r.Header.Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("%s %s with an sk key: Access-Control-Allow-Origin %q, want none", c.method, c.target, v)
		}
	}
	// What a storefront calls keeps working from its page.
	for _, c := range []struct{ method, target string }{
		{"GET", "/v1/events"}, {"POST", "/v1/orders"}, {"GET", "/v1/orders/ord_x"}, {"POST", "/v1/seat-holds"},
	} {
		r := preflight(c.target, c.method)
		if r.Header.Get("Access-Control-Allow-Origin") != shopOrigin || !strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
			t.Errorf("preflight %s %s: allow-origin %q allow-headers %q, want the page's origin allowed",
				c.method, c.target, r.Header.Get("Access-Control-Allow-Origin"), r.Header.Get("Access-Control-Allow-Headers"))
		}
	}
	r := h.get("/v1/events", pk, origin)
	wantStatus(t, r, http.StatusOK)
	if v := r.Header.Get("Access-Control-Allow-Origin"); v != shopOrigin {
		t.Errorf("GET /v1/events with the pk key: Access-Control-Allow-Origin %q, want %s", v, shopOrigin)
	}
}

// A request body naming a field twice, or twice in different case (which
// encoding/json would resolve silently to the last), is refused with the field
// in param, and nothing is written.
func TestDecode_DuplicateOrCaseVariantKeysAreRefused(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	for i, c := range []struct{ body, param string }{
		{`{` + buyer + `,"tier_id":"evt_concert_ga","quantity":1,"quantity":10}`, "quantity"},
		{`{` + buyer + `,"tier_id":"evt_concert_ga","Tier_ID":"evt_concert_vip","quantity":1}`, "Tier_ID"},
		{`{"buyer":{"email":"anna@example.com","EMAIL":"eve@example.com","name":"Anna","phone":"+79991234567"},"tier_id":"evt_concert_ga","quantity":1}`, "buyer.EMAIL"},
	} {
		r := h.post("/v1/orders", sk, c.body, idem("dup-"+itoa(i)))
		wantError(t, r, http.StatusBadRequest, "invalid_request", c.param)
	}
	wantError(t, h.post("/v1/orders/preview", sk, `{"tier_id":"evt_concert_ga","quantity":1,"QUANTITY":2}`),
		http.StatusBadRequest, "invalid_request", "QUANTITY")
	r := h.get("/v1/orders", sk)
	wantStatus(t, r, http.StatusOK)
	if data := r.json(t)["data"].([]any); len(data) != 0 {
		t.Fatalf("refused bodies wrote %d orders", len(data))
	}
}
