package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/auth"
	"tix/internal/secretscan"
	"tix/internal/secretscan/keylist"
	"tix/internal/secretscan/scantest"
	"tix/internal/ticketing"
)

// scanHarness is the harness with the secret scanning endpoint on, verified
// under a simulated reporter's published keys.
func scanHarness(t *testing.T) (*harness, *scantest.Reporter) {
	h := newHarness(t)
	rep := scantest.New()
	t.Cleanup(rep.Close)
	h.srv.SecretScanning = &secretscan.Service{Keys: h.st.Keys, Clock: h.clk,
		Publisher: &keylist.List{URL: rep.KeysURL(), TTL: time.Hour, Now: h.clk.Now}}
	return h, rep
}

// signed sends body to the endpoint signed by the reporter's current key.
func signed(h *harness, rep *scantest.Reporter, body []byte) response {
	id := rep.CurrentKeyID()
	return h.do("POST", "/v1/secret-scanning/github", string(body),
		header(secretscan.HeaderKeyID, id), header(secretscan.HeaderSignature, rep.Sign(id, body)))
}

// Through the router: a signed report revokes the live secret key it names
// (the next request with it is 401: the process that applied the report
// drops the key from its cache),
// leaves the publishable key alone and labels each token; the same report
// again answers the same and changes nothing.
func TestSecretScanning_SignedReportRevokesTheKey(t *testing.T) {
	h, rep := scanHarness(t)
	h.organizer(orgA)
	sk, skKey := h.key(orgA, auth.Secret, withEnv(ticketing.EnvLive))
	pk, _ := h.key(orgA, auth.Publishable, withOrigins("http://localhost:3000"))
	wantStatus(t, h.get("/v1/ping", sk), 200) // cached by this process from now on
	const url = "https://github.com/octo/shop/blob/0123abc/.env"
	body := scantest.Body(
		secretscan.Match{Token: sk, Type: "tix_secret_key", URL: url, Source: "content"},
		secretscan.Match{Token: pk, Type: "tix_secret_key", URL: url, Source: "content"},
		secretscan.Match{Token: "sk_live_" + strings.Repeat("x", 38), Type: "tix_secret_key", URL: url, Source: "commit"},
	)
	for round := range 2 {
		r := signed(h, rep, body)
		wantStatus(t, r, 200)
		if got := string(r.body); !strings.Contains(got, `{"token_raw":"`+sk+`","token_type":"tix_secret_key","label":"true_positive"}`) ||
			!strings.Contains(got, `{"token_raw":"`+pk+`","token_type":"tix_secret_key","label":"false_positive"}`) ||
			strings.Count(got, "false_positive") != 2 {
			t.Fatalf("round %d feedback: %s", round, got)
		}
	}
	k, err := h.st.Keys.KeyByID(context.Background(), skKey.ID)
	if err != nil || k.RevokedAt == nil || k.RevokeReason != auth.RevokedLeaked || k.LeakSource != url {
		t.Fatalf("key after the reports: %+v %v", k, err)
	}
	// The process that applied the report refuses the key at once (others
	// within KeyCacheTTL: the clock has not moved).
	wantError(t, h.get("/v1/ping", sk), 401, "unauthorized", "")
	wantStatus(t, h.get("/v1/ping", pk, header("Origin", "http://localhost:3000")), 200)
}

// A report that does not verify is 401 with the contract's envelope and
// changes nothing; one that verifies but is no report is 400; a body over the
// limit is 400; only POST is served.
func TestSecretScanning_RefusedReportsChangeNothing(t *testing.T) {
	h, rep := scanHarness(t)
	h.organizer(orgA)
	sk, _ := h.key(orgA, auth.Secret)
	body := scantest.Body(secretscan.Match{Token: sk, Type: "tix_secret_key", URL: "https://github.com/o/r/blob/1/f"})
	id := rep.CurrentKeyID()
	stranger := scantest.New()
	defer stranger.Close()
	for name, opts := range map[string][]reqOpt{
		"unsigned":      nil,
		"no key id":     {header(secretscan.HeaderSignature, rep.Sign(id, body))},
		"unknown key":   {header(secretscan.HeaderKeyID, stranger.CurrentKeyID()), header(secretscan.HeaderSignature, stranger.Sign(stranger.CurrentKeyID(), body))},
		"bad signature": {header(secretscan.HeaderKeyID, id), header(secretscan.HeaderSignature, stranger.Sign(stranger.CurrentKeyID(), body))},
		"altered body":  {header(secretscan.HeaderKeyID, id), header(secretscan.HeaderSignature, rep.Sign(id, []byte(strings.Replace(string(body), "/o/r/", "/o/s/", 1))))},
	} {
		wantError(t, h.do("POST", "/v1/secret-scanning/github", string(body), opts...), 401, "unauthorized", "")
		_ = name
	}
	h.clk.Advance(api.DefaultLimits.KeyCacheTTL)
	wantStatus(t, h.get("/v1/ping", sk), 200)

	wantError(t, signed(h, rep, []byte(`{"token":"x"}`)), 400, "invalid_request", "body")
	wantError(t, signed(h, rep, []byte(`[{"type":"t"}]`)), 400, "invalid_request", "[0].token")
	big := []byte(`[{"token":"` + strings.Repeat("a", int(api.DefaultLimits.MaxBodyBytes)) + `"}]`)
	wantError(t, signed(h, rep, big), 400, "invalid_request", "")
	wantStatus(t, h.do(http.MethodGet, "/v1/secret-scanning/github", ""), 405)
	h.clk.Advance(api.DefaultLimits.KeyCacheTTL)
	wantStatus(t, h.get("/v1/ping", sk), 200)
}
