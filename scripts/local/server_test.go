package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/ticketing"
)

// anyKey admits every key as an sk_test key with every scope: the requests
// below are about the HTTP server, not keys.
type anyKey struct{}

func (anyKey) LookupKey(context.Context, string) (*auth.Key, error) {
	return &auth.Key{ID: "key_local", OrganizerID: "org_local", Type: auth.Secret, Environment: ticketing.EnvTest, Scopes: auth.AllScopes}, nil
}

func (anyKey) CountRequest(context.Context, string, int, time.Time) (int, bool, error) {
	return 1, true, nil
}

// startServer runs the local runner's server, with the real router, on a free port.
func startServer(t *testing.T, read time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer((&api.Server{Keys: anyKey{}, Clock: clock.System{}}).Handler(), read)
	go func() { _ = srv.Serve(envelopeListener{ln}) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// rawRequest writes raw bytes on a fresh connection and reads one response.
func rawRequest(t *testing.T, addr, raw string, wait time.Duration) (*http.Response, []byte, time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	start := time.Now()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response after %v: %v", time.Since(start), err)
	}
	body, _ := io.ReadAll(res.Body)
	return res, body, time.Since(start)
}

// wantEnvelope checks the contract's error envelope.
func wantEnvelope(t *testing.T, res *http.Response, body []byte, status int, param string) {
	t.Helper()
	if res.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", res.StatusCode, status, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json: %s", ct, body)
	}
	if res.Header.Get("Tix-Request-Id") == "" || res.Header.Get("Tix-Version") != api.APIVersion {
		t.Errorf("headers %v lack Tix-Request-Id or Tix-Version", res.Header)
	}
	var env struct {
		Error struct {
			Code    string  `json:"code"`
			Message string  `json:"message"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("not a JSON envelope: %v: %q", err, body)
	}
	got := ""
	if env.Error.Param != nil {
		got = *env.Error.Param
	}
	if env.Error.Code != "invalid_request" || env.Error.Message == "" || got != param {
		t.Errorf("envelope %s, want invalid_request with a message and param %q", body, param)
	}
}

// The errors net/http answers itself, before any handler, come in the envelope.
func TestLocalServer_ErrorsOfTheHTTPServerItselfAreEnvelopes(t *testing.T) {
	addr := startServer(t, readTimeout)
	cases := []struct {
		name, raw string
		status    int
		param     string
	}{
		{"malformed URL escape", "GET /v1/events/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, ""},
		{"malformed request line", "GET\r\nHost: x\r\n\r\n", 400, ""},
		{"missing Host", "GET /v1/ping HTTP/1.1\r\n\r\n", 400, "Host"},
		{"unsupported Transfer-Encoding", "POST /v1/orders HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "Transfer-Encoding"},
		{"oversized headers", "GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", 431, ""},
		{"unsupported Expect", "GET /v1/ping HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n", 417, "Expect"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, body, _ := rawRequest(t, addr, c.raw, 5*time.Second)
			wantEnvelope(t, res, body, c.status, c.param)
		})
	}
	// A handler's own answers pass through untouched, text/plain-looking or not.
	res, body, _ := rawRequest(t, addr, "GET /v1/nope HTTP/1.1\r\nHost: x\r\n\r\n", 5*time.Second)
	if res.StatusCode != 404 || !strings.Contains(string(body), `"not_found"`) || res.Header.Get("Date") == "" {
		t.Errorf("router answer changed: %d %v %s", res.StatusCode, res.Header, body)
	}
}

// A body shorter than its Content-Length is answered within the read timeout,
// not waited for: the handler's read fails and it answers 400.
func TestLocalServer_ShortBodyIsAnsweredWithinSeconds(t *testing.T) {
	addr := startServer(t, time.Second)
	raw := "POST /v1/orders/preview HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + auth.NewSecret(auth.Secret, ticketing.EnvTest) +
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"tier_id\":"
	res, body, took := rawRequest(t, addr, raw, 10*time.Second)
	wantEnvelope(t, res, body, 400, "")
	if took > 4*time.Second {
		t.Errorf("answered after %v, want within a few seconds of the 1 s read timeout", took)
	}
	if !strings.Contains(string(body), "did not arrive in time") {
		t.Errorf("message does not explain the short body: %s", body)
	}
	// The runner's own settings bound the wait too.
	srv := newHTTPServer(http.NotFoundHandler(), readTimeout)
	if srv.ReadTimeout <= 0 || srv.ReadTimeout > 30*time.Second || srv.IdleTimeout <= 0 || srv.ReadHeaderTimeout <= 0 {
		t.Errorf("timeouts %v/%v/%v, want all set, the read timeout at most 30 s", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout)
	}
}
