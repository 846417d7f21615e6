package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"tix/internal/logging"
)

// lines decodes the JSON log lines in buf.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
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

func TestHandler_AddsTheContextsRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(logging.NewHandler(slog.NewJSONHandler(&buf, nil)))
	ctx := logging.WithRequestID(context.Background(), "req_1")

	log.InfoContext(ctx, "in a request", "k", "v")
	log.With("queue", "q").WarnContext(ctx, "with attrs")
	log.WithGroup("g").ErrorContext(ctx, "in a group", "k", "v")
	log.InfoContext(context.Background(), "outside a request")
	log.Info("no context")

	got := lines(t, &buf)
	if len(got) != 5 {
		t.Fatalf("%d lines, want 5: %s", len(got), buf.String())
	}
	if got[0]["request_id"] != "req_1" || got[0]["k"] != "v" {
		t.Errorf("line %v, want request_id req_1 beside its own attributes", got[0])
	}
	if got[1]["request_id"] != "req_1" || got[1]["queue"] != "q" {
		t.Errorf("line %v: a logger With attributes keeps the request id", got[1])
	}
	if g, _ := got[2]["g"].(map[string]any); g["request_id"] != "req_1" {
		t.Errorf("line %v: a logger WithGroup keeps the request id", got[2])
	}
	for _, l := range got[3:] {
		if _, ok := l["request_id"]; ok {
			t.Errorf("line %v has a request id without a request", l)
		}
	}
}

func TestHandler_LeavesTheRecordOfOtherHandlersAlone(t *testing.T) {
	var a, b bytes.Buffer
	ha := logging.NewHandler(slog.NewJSONHandler(&a, nil))
	hb := slog.NewJSONHandler(&b, nil)
	ctx := logging.WithRequestID(context.Background(), "req_2")
	r := slog.NewRecord(testTime, slog.LevelInfo, "shared", 0)
	if err := ha.Handle(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := hb.Handle(ctx, r); err != nil {
		t.Fatal(err)
	}
	if lines(t, &a)[0]["request_id"] != "req_2" {
		t.Errorf("wrapped handler: %s", a.String())
	}
	if strings.Contains(b.String(), "req_2") {
		t.Errorf("the wrapper changed the caller's record: %s", b.String())
	}
	if !ha.Enabled(ctx, slog.LevelInfo) || ha.Enabled(ctx, slog.LevelDebug) {
		t.Error("Enabled does not follow the wrapped handler's level")
	}
	if logging.RequestID(context.Background()) != "" || logging.RequestID(ctx) != "req_2" {
		t.Error("RequestID does not read what WithRequestID stored")
	}
}

var testTime = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
