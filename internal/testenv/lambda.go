package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// EventsDir is the repository's events/ folder of sample Lambda payloads.
func EventsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "events")
}

// APIEvent is a sample API Gateway v2 event and the status it must produce.
type APIEvent struct {
	Name   string
	Event  events.APIGatewayV2HTTPRequest
	Status int
}

// LoadAPIEvents reads events/<prefix>*.json, replacing {{NAME}} placeholders.
func LoadAPIEvents(tb testing.TB, prefix string, vars map[string]string) []APIEvent {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(EventsDir(), prefix+"*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no sample events %s*.json in %s", prefix, EventsDir())
	}
	var out []APIEvent
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		s := string(raw)
		for k, v := range vars {
			s = strings.ReplaceAll(s, "{{"+k+"}}", v)
		}
		var ev struct {
			events.APIGatewayV2HTTPRequest
			Expect struct {
				Status int `json:"status"`
			} `json:"_expect"`
		}
		if err := json.Unmarshal([]byte(s), &ev); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		out = append(out, APIEvent{Name: filepath.Base(f), Event: ev.APIGatewayV2HTTPRequest, Status: ev.Expect.Status})
	}
	return out
}
