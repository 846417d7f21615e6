package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"tix/internal/dashboard"
	"tix/internal/edge"
)

// Behind the CloudFront edge every request comes from CloudFront's address:
// the per-client sign-in budget counts the viewer's address a request
// proves it came through the edge with, and only then.
func TestSignInGuessing_PerClientLimitBehindTheEdge(t *testing.T) {
	secret := strings.Repeat("s", 40)
	h := newHarness(t, func(s *dashboard.Settings) {
		s.SlowAfter, s.AccountLimit, s.ClientLimit, s.EdgeSecret = 100, 100, 3, secret
	}, nil)
	c := h.client()
	attempt := func(i int, hdr ...string) int {
		form := url.Values{"email": {fmt.Sprintf("nobody%d@example.com", i)}, "password": {"whatever123"}}
		return h.do(c, http.MethodPost, "/signin", form, hdr...).status
	}
	viewer := func(ip string) []string {
		return []string{edge.SecretHeader, secret, edge.ViewerAddressHeader, ip + ":443"}
	}
	for i := range 3 {
		if got := attempt(i, viewer("198.51.100.7")...); got != http.StatusUnauthorized {
			t.Fatalf("viewer A attempt %d: %d, want 401", i+1, got)
		}
	}
	if got := attempt(3, viewer("198.51.100.7")...); got != http.StatusTooManyRequests {
		t.Errorf("viewer A past its budget: %d, want 429", got)
	}
	if got := attempt(4, viewer("203.0.113.9")...); got != http.StatusUnauthorized {
		t.Errorf("viewer B behind the same edge: %d, want 401 (its own budget)", got)
	}
	// Without the proof the viewer header is not believed: every such
	// request counts on the socket's address, whatever it claims.
	for i := range 3 {
		forged := []string{edge.SecretHeader, "wrong", edge.ViewerAddressHeader, fmt.Sprintf("192.0.2.%d:443", i+1)}
		if got := attempt(10+i, forged...); got != http.StatusUnauthorized {
			t.Fatalf("unproven attempt %d: %d, want 401", i+1, got)
		}
	}
	if got := attempt(20, edge.ViewerAddressHeader, "192.0.2.99:443"); got != http.StatusTooManyRequests {
		t.Errorf("a claimed viewer address without the proof: %d, want 429 (the socket's budget is spent)", got)
	}
}
