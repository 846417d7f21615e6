package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"tix/internal/auth"
	"tix/internal/logging"
)

// captureLogs installs, for the test, the service's logger (JSON through the
// request-id handler) writing into a buffer, and returns the decoded lines.
// Not parallel: it replaces the process's default logger.
func captureLogs(t *testing.T) func() []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(logging.NewHandler(slog.NewJSONHandler(&buf, nil))))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return func() []map[string]any {
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			out = append(out, m)
		}
		return out
	}
}

// A handler's own log line, the router's "request failed" line and the panic
// line all carry the request id the response quotes, though no log call
// passes it.
func TestLogs_CarryTheRequestIDFromTheContext(t *testing.T) {
	for name, tc := range map[string]struct {
		handle func(http.ResponseWriter, *http.Request) error
		want   string
	}{
		"error": {func(_ http.ResponseWriter, r *http.Request) error {
			slog.InfoContext(r.Context(), "from the handler")
			return errors.New("store unavailable")
		}, "from the handler|request failed"},
		"panic": {func(_ http.ResponseWriter, r *http.Request) error {
			slog.InfoContext(r.Context(), "from the handler")
			panic("boom")
		}, "from the handler|panic|request failed"},
	} {
		t.Run(name, func(t *testing.T) {
			logs := captureLogs(t)
			rt := &route{method: "GET", pattern: "/logs", handle: tc.handle}
			rec, _ := serve(t, rt, testKey(auth.Secret), authed("GET", "/v1/logs", "", auth.Secret))
			id := rec.Header().Get("Tix-Request-Id")
			if rec.Code != http.StatusInternalServerError || id == "" {
				t.Fatalf("status %d, request id %q", rec.Code, id)
			}
			lines := logs()
			var msgs []string
			for _, l := range lines {
				msgs = append(msgs, l["msg"].(string))
				if l["request_id"] != id {
					t.Errorf("log line %v: request_id %v, want %s", l, l["request_id"], id)
				}
			}
			if got := strings.Join(msgs, "|"); got != tc.want {
				t.Errorf("log lines %s, want %s", got, tc.want)
			}
		})
	}
}
