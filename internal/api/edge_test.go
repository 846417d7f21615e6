package api_test

import (
	"context"
	"strings"
	"testing"

	"tix/internal/api"
	"tix/internal/auth"
)

// cloudFront is the address API Gateway reports for a request CloudFront
// forwards; the viewers' addresses come in CloudFront-Viewer-Address.
const cloudFront = "130.176.1.10"

var edgeSecret = strings.Repeat("E", 48)

func viewer(addr string) reqOpt { return header(api.ViewerAddressHeader, addr) }
func proof(s string) reqOpt     { return header(api.EdgeSecretHeader, s) }

// TestEdge_ViewerAddressOnlyWithTheProof: behind the CloudFront edge, a secret
// key's IP allow-list and a publishable key's per-client budget see the
// viewer's address from CloudFront-Viewer-Address when the request carries
// the edge's secret header; a forged CloudFront-Viewer-Address without it, or
// with a wrong secret, is ignored and the source address counts.
func TestEdge_ViewerAddressOnlyWithTheProof(t *testing.T) {
	h := newHarness(t)
	h.organizer(orgA)
	h.srv.Edge = api.Edge{Secret: edgeSecret}
	sk, _ := h.key(orgA, auth.Secret, withIPs("203.0.113.7/32", "2001:db8::/64"))
	from := remoteAddr(cloudFront)

	t.Run("allow-list: the viewer's address with the proof", func(t *testing.T) {
		wantStatus(t, h.get("/v1/events", sk, from, viewer("203.0.113.7:51234"), proof(edgeSecret)), 200)
		wantStatus(t, h.get("/v1/events", sk, from, viewer("2001:db8::5:443"), proof(edgeSecret)), 200)
		wantError(t, h.get("/v1/events", sk, from, viewer("198.51.100.9:51234"), proof(edgeSecret)), 403, "ip_not_allowed", "ip")
	})
	t.Run("allow-list: a forged viewer address is ignored", func(t *testing.T) {
		r := h.get("/v1/events", sk, from, viewer("203.0.113.7:51234"))
		wantError(t, r, 403, "ip_not_allowed", "ip")
		if !strings.Contains(string(r.body), cloudFront) {
			t.Errorf("refusal names %s, want the source address %s", r.body, cloudFront)
		}
		wantError(t, h.get("/v1/events", sk, from, viewer("203.0.113.7:51234"), proof(edgeSecret[1:])), 403, "ip_not_allowed", "ip")
		wantError(t, h.get("/v1/events", sk, from, viewer("203.0.113.7:51234"), proof(edgeSecret+"x")), 403, "ip_not_allowed", "ip")
		wantError(t, h.get("/v1/events", sk, from, viewer("203.0.113.7:51234"), proof(strings.ToLower(edgeSecret))), 403, "ip_not_allowed", "ip")
		// Straight to the execute-api URL from the allowed address itself: its own.
		wantStatus(t, h.get("/v1/events", sk, remoteAddr("203.0.113.7"), viewer("198.51.100.9:1")), 200)
	})
	t.Run("a malformed viewer address falls back to the source", func(t *testing.T) {
		wantError(t, h.get("/v1/events", sk, from, viewer("203.0.113.7"), proof(edgeSecret)), 403, "ip_not_allowed", "ip")
		wantError(t, h.get("/v1/events", sk, from, viewer("not-an-ip:80"), proof(edgeSecret)), 403, "ip_not_allowed", "ip")
	})
	t.Run("without an edge configured the header is never used", func(t *testing.T) {
		noEdge := &api.Server{Keys: h.srv.Keys, Health: h.srv.Health, Clock: h.srv.Clock, Catalog: h.srv.Catalog, Sales: h.srv.Sales, Limits: h.srv.Limits}
		r := h.serveOn(noEdge.Handler(), "/v1/events", sk, cloudFront, viewer("203.0.113.7:51234"), proof(""))
		wantError(t, r, 403, "ip_not_allowed", "ip")
	})
	t.Run("pk per-client budgets are per viewer", func(t *testing.T) {
		h.srv.Limits.IPReadsPerWindow = 1
		defer func() { h.srv.Limits.IPReadsPerWindow = api.DefaultLimits.IPReadsPerWindow }()
		pk, _ := h.key(orgA, auth.Publishable, withOrigins(shop))
		o := header("Origin", shop)
		wantStatus(t, h.get("/v1/events", pk, o, from, viewer("198.51.100.1:1000"), proof(edgeSecret)), 200)
		wantStatus(t, h.get("/v1/events", pk, o, from, viewer("198.51.100.2:1000"), proof(edgeSecret)), 200)
		wantError(t, h.get("/v1/events", pk, o, from, viewer("198.51.100.1:2000"), proof(edgeSecret)), 429, "rate_limited", "")
		// Forged viewer addresses share the source address's one budget.
		wantStatus(t, h.get("/v1/events", pk, o, from, viewer("198.51.100.3:1000")), 200)
		wantError(t, h.get("/v1/events", pk, o, from, viewer("198.51.100.4:1000")), 429, "rate_limited", "")
	})
}

// TestEdge_OnlyRefusesRequestsThatSkipTheEdge: with Edge.Only, a keyed request
// without the proof is refused before its key is looked at; with the proof it
// goes on; the public routes (health, the bank's notifications) do not need it.
func TestEdge_OnlyRefusesRequestsThatSkipTheEdge(t *testing.T) {
	h := newHarness(t)
	h.organizer(orgA)
	h.srv.Edge = api.Edge{Secret: edgeSecret, Only: true}
	sk, _ := h.key(orgA, auth.Secret)
	wantError(t, h.get("/v1/events", sk), 403, "forbidden", "")
	wantError(t, h.get("/v1/events", "sk_test_unknown"), 403, "forbidden", "")
	wantError(t, h.get("/v1/events", sk, proof("wrong"+edgeSecret[5:])), 403, "forbidden", "")
	wantError(t, h.do("GET", "/v1/orders/ord_1?poll_token=pt_x", ""), 403, "forbidden", "")
	wantStatus(t, h.get("/v1/events", sk, remoteAddr(cloudFront), viewer("203.0.113.7:1"), proof(edgeSecret)), 200)
	wantStatus(t, h.get("/v1/health", ""), 200)
	h.srv.PaymentNotification = func(_ context.Context, _ []byte) error { return nil }
	wantStatus(t, h.do("POST", "/v1/payment-notifications/tbank", `{}`), 200)
}
