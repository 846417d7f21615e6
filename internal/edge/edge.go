// Package edge tells a request that came through the stack's CloudFront
// distribution (the stack's -c edge=true) from one sent straight to the
// execute-api URL, and for the first gives the viewer's own address. API
// Gateway reports CloudFront's address as the source IP; CloudFront adds
// the viewer's as CloudFront-Viewer-Address ("ip:port") and proves the
// request passed it with a secret origin header. Anyone can send
// CloudFront-Viewer-Address straight to the execute-api URL: without the
// secret it is ignored. The API (internal/api) and the dashboard share it.
package edge

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
)

const (
	// SecretHeader is the origin custom header CloudFront adds (CloudFront
	// overwrites a viewer header of the same name, so a viewer cannot set it).
	SecretHeader = "Tix-Edge-Secret"
	// ViewerAddressHeader is CloudFront's viewer address: ip:port, an IPv6
	// address unbracketed ("2001:db8::1:443").
	ViewerAddressHeader = "CloudFront-Viewer-Address"
)

// Resolve returns r with RemoteAddr set to the viewer's address when r
// carries the proof that it came through the edge whose secret is secret
// (true); otherwise r as API Gateway reported it (false). Either way both
// headers are removed, so the proof never reaches a handler or a log. An
// empty secret means no edge: the headers are removed and never believed.
func Resolve(r *http.Request, secret string) (*http.Request, bool) {
	got := r.Header.Values(SecretHeader)
	viewer := r.Header.Values(ViewerAddressHeader)
	if len(got) == 0 && len(viewer) == 0 {
		return r, false
	}
	r = r.WithContext(r.Context()) // a copy: RemoteAddr and Header are ours to change
	r.Header = r.Header.Clone()
	r.Header.Del(SecretHeader)
	r.Header.Del(ViewerAddressHeader)
	if secret == "" || len(got) != 1 || !sameSecret(got[0], secret) {
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
