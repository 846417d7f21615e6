package api

import (
	"context"
	"net/http"

	"tix/internal/auth"
	"tix/internal/secretscan"
	"tix/internal/ticketing"
)

// SecretScanning applies one secret scanning partner's report (secretscan.Service).
type SecretScanning interface {
	Report(ctx context.Context, keyID, signature string, body []byte) ([]secretscan.Feedback, error)
}

// secretScanningReport is POST /v1/secret-scanning/github: GitHub reports
// tokens it found in public (docs/secret-scanning.md). No API key: the
// report's signature under GitHub's published key is its authentication; one
// that does not verify is a 401 and changes nothing. The answer is the
// feedback per token, true_positive for each tix secret key (now revoked).
func (s *Server) secretScanningReport(w http.ResponseWriter, r *http.Request) error {
	if s.SecretScanning == nil {
		return ticketing.NotFound("secret scanning endpoint")
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	fb, err := s.SecretScanning.Report(r.Context(), r.Header.Get(secretscan.HeaderKeyID), r.Header.Get(secretscan.HeaderSignature), body)
	if err != nil {
		return err
	}
	for _, f := range fb {
		if f.Label == secretscan.TruePositive {
			s.keys.drop(auth.Hash(f.TokenRaw)) // refused by this process at once, by the others within KeyCacheTTL
		}
	}
	writeJSON(w, http.StatusOK, fb)
	return nil
}
