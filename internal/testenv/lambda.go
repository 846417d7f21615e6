package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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

// placeholder is a {{NAME}} of a sample event.
var placeholder = regexp.MustCompile(`\{\{[A-Z0-9_]+\}\}`)

// Placeholders returns the {{NAME}} placeholders of a sample event, without braces.
func Placeholders(raw []byte) []string {
	var out []string
	for _, m := range placeholder.FindAll(raw, -1) {
		if n := string(m[2 : len(m)-2]); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
		// A placeholder left over would make the event test something else
		// (a 404 for "{{ORDER_ID}}") without saying so.
		if left := Placeholders([]byte(s)); len(left) > 0 {
			tb.Fatalf("%s: placeholders %v are not set by this test (it sets %v)", filepath.Base(f), left, sortedKeys(vars))
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
