package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	"tix/internal/ticketing"
)

// A CloudFront distribution with AWS WAF may stand in front of the API (the
// stack's -c edge=true). API Gateway then reports CloudFront's address as the
// source IP, so the client's own address comes from the header CloudFront adds,
// CloudFront-Viewer-Address ("ip:port"), but only for a request that proves it
// came through the distribution: CloudFront adds the EdgeSecretHeader origin
// header with the stack's secret. Anyone can send CloudFront-Viewer-Address
// straight to the execute-api URL; without the secret it is ignored.
const (
	// EdgeSecretHeader is the origin custom header CloudFront adds (CloudFront
	// overwrites a viewer header of the same name, so a viewer cannot set it).
	EdgeSecretHeader = "Tix-Edge-Secret"
	// ViewerAddressHeader is CloudFront's viewer address: ip:port, an IPv6
	// address unbracketed ("2001:db8::1:443").
	ViewerAddressHeader = "CloudFront-Viewer-Address"
)

// Edge is the proof a request came through the CloudFront distribution.
type Edge struct {
	// Secret is the value of EdgeSecretHeader CloudFront adds
	// (TIX_EDGE_SECRET); "" means no edge: CloudFront-Viewer-Address is
	// never used.
	Secret string
	// Only refuses (403 forbidden) every keyed or poll-token request that
	// lacks the proof (TIX_EDGE_ONLY), so the WAF in front cannot be
	// bypassed through the execute-api URL. The public routes (health, the
	// API reference, the bank's payment notifications) stay reachable.
	Only bool
}

// viaEdge returns r with RemoteAddr set to the viewer's address when r carries
// the edge's proof (true); otherwise r as API Gateway reported it, with any
// CloudFront-Viewer-Address removed (false). The proof header never reaches a
// handler or a log.
func (s *Server) viaEdge(r *http.Request) (*http.Request, bool) {
	got := r.Header.Values(EdgeSecretHeader)
	viewer := r.Header.Values(ViewerAddressHeader)
	if len(got) == 0 && len(viewer) == 0 {
		return r, false
	}
	r = r.WithContext(r.Context()) // a copy: RemoteAddr and Header are ours to change
	r.Header = r.Header.Clone()
	r.Header.Del(EdgeSecretHeader)
	r.Header.Del(ViewerAddressHeader)
	if s.Edge.Secret == "" || len(got) != 1 || !sameSecret(got[0], s.Edge.Secret) {
		return r, false
	}
	if len(viewer) != 1 {
		slog.WarnContext(r.Context(), "edge request without one "+ViewerAddressHeader+": the source address is used", "count", len(viewer))
		return r, true
	}
	ip, ok := viewerIP(viewer[0])
	if !ok {
		slog.WarnContext(r.Context(), "edge request with a malformed "+ViewerAddressHeader+": the source address is used", "value", viewer[0])
		return r, true
	}
	r.RemoteAddr = ip
	return r, true
}

// sameSecret compares in constant time, over digests so the length of the
// secret does not show either.
func sameSecret(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// viewerIP is the address of "ip:port", "[ipv6]:port" or CloudFront's
// unbracketed "ipv6:port".
func viewerIP(v string) (string, bool) {
	v = strings.TrimSpace(v)
	i := strings.LastIndexByte(v, ':')
	if i <= 0 {
		return "", false
	}
	host, port := strings.TrimSuffix(strings.TrimPrefix(v[:i], "["), "]"), v[i+1:]
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", false
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "", false
	}
	return ip.String(), true
}

// errNotViaEdge answers a request that skipped the edge when Edge.Only is set.
var errNotViaEdge = &ticketing.Error{Code: ticketing.CodeForbidden,
	Message: "This API is served through its CloudFront distribution: send requests to the API's public URL, not to the execute-api URL"}
