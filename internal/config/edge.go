package config

import (
	"errors"
	"fmt"
)

// Edge is the CloudFront distribution in front of the API (TIX_EDGE_*).
type Edge struct {
	Secret string // TIX_EDGE_SECRET: "" = no edge
	Only   bool   // TIX_EDGE_ONLY
}

// MinEdgeSecret is the shortest TIX_EDGE_SECRET accepted.
const MinEdgeSecret = 32

// edge reads the edge settings: a secret that can travel as a header value,
// long enough not to be guessed, and TIX_EDGE_ONLY only with it.
func (r *reader) edge() Edge {
	e := Edge{Secret: r.get("TIX_EDGE_SECRET")}
	switch v := r.get("TIX_EDGE_ONLY"); v {
	case "true":
		e.Only = true
	case "false":
	default:
		r.errs = append(r.errs, fmt.Errorf("TIX_EDGE_ONLY=%q: must be true or false", v))
	}
	if e.Secret == "" {
		if e.Only {
			r.errs = append(r.errs, errors.New("TIX_EDGE_ONLY: needs TIX_EDGE_SECRET, the proof that a request came through the edge"))
		}
		return e
	}
	visible := len(e.Secret) >= MinEdgeSecret
	for _, c := range []byte(e.Secret) {
		visible = visible && c > ' ' && c < 0x7f
	}
	if !visible {
		r.errs = append(r.errs, fmt.Errorf("TIX_EDGE_SECRET: must be at least %d visible ASCII characters (for example: openssl rand -hex 32)", MinEdgeSecret))
	}
	return e
}
