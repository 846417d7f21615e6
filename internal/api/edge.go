package api

import (
	"net/http"

	"tix/internal/edge"
	"tix/internal/ticketing"
)

// A CloudFront distribution with AWS WAF may stand in front of the API (the
// stack's -c edge=true); internal/edge tells its requests apart and gives the
// viewer's address.
const (
	// EdgeSecretHeader is the origin custom header CloudFront adds.
	EdgeSecretHeader = edge.SecretHeader
	// ViewerAddressHeader is CloudFront's viewer address.
	ViewerAddressHeader = edge.ViewerAddressHeader
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
// CloudFront-Viewer-Address removed (false).
func (s *Server) viaEdge(r *http.Request) (*http.Request, bool) {
	return edge.Resolve(r, s.Edge.Secret)
}

// errNotViaEdge answers a request that skipped the edge when Edge.Only is set.
var errNotViaEdge = &ticketing.Error{Code: ticketing.CodeForbidden,
	Message: "This API is served through its CloudFront distribution: send requests to the API's public URL, not to the execute-api URL"}
