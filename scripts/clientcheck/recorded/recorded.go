//go:build clientcheck

// Package recorded serves real API responses with one enum value rewritten to
// a value no generated client knows, so that the clients scripts/clientcheck.sh
// generates are run over it: the contract says clients treat enums as open.
//
// The responses are the ones internal/api's golden test records from the real
// router (internal/api/testdata/bodies.golden, kept current by that test);
// clientcheck.sh names the file in TIX_BODIES_GOLDEN.
package recorded

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Case is one enum member of one recorded response.
type Case struct {
	Name    string   `json:"name"`    // what is rewritten
	Golden  string   `json:"golden"`  // the golden entry's title
	Path    []string `json:"path"`    // members and array indexes down to the enum value
	Unknown string   `json:"unknown"` // the value written there
}

// The cases, shared with the TypeScript check (ts/openenums.ts).
//
//go:embed cases.json
var casesJSON []byte

// Find returns the case named name.
func Find(t *testing.T, name string) Case {
	t.Helper()
	var cases []Case
	if err := json.Unmarshal(casesJSON, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %q", name)
	return Case{}
}

// Body is the golden body of c with its enum value rewritten to c.Unknown.
func (c Case) Body(t *testing.T) []byte {
	t.Helper()
	body := golden(t, c.Golden)
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", c.Golden, err)
	}
	holder, last := v, c.Path[len(c.Path)-1]
	for _, p := range c.Path[:len(c.Path)-1] {
		holder = step(t, c, holder, p)
	}
	obj, ok := holder.(map[string]any)
	if _, known := obj[last].(string); !ok || !known {
		t.Fatalf("%s: %v is not a string in %s", c.Name, c.Path, body)
	}
	obj[last] = c.Unknown
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func step(t *testing.T, c Case, v any, p string) any {
	t.Helper()
	if i, err := strconv.Atoi(p); err == nil {
		if a, ok := v.([]any); ok && i < len(a) {
			return a[i]
		}
	} else if m, ok := v.(map[string]any); ok && m[p] != nil {
		return m[p]
	}
	t.Fatalf("%s: no %q on the path %v", c.Name, p, c.Path)
	return nil
}

// golden returns the body of the entry titled title: the line after
// "title: METHOD path -> status".
func golden(t *testing.T, title string) []byte {
	t.Helper()
	file := os.Getenv("TIX_BODIES_GOLDEN")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the recorded responses (TIX_BODIES_GOLDEN=%q; scripts/clientcheck.sh sets it): %v", file, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), title+": ") && sc.Scan() {
			return unmask(sc.Bytes())
		}
	}
	t.Fatalf("no entry %q in %s", title, file)
	return nil
}

// Serve answers every request with body and the headers every response of
// the API carries.
func Serve(t *testing.T, body []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Tix-Request-Id", "req_clientcheck")
		w.Header().Set("Tix-Version", "2026-06-01")
		_, _ = fmt.Fprintf(w, "%s", body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// The golden test names the values a run draws at random: <ticket_number#3>,
// <id#2>... A ticket number gets back the form its schema's pattern wants.
var (
	masks         = regexp.MustCompile(`<([a-z_0-9]+)#([0-9]+)>`)
	ticketNumbers = regexp.MustCompile(`<ticket_number#([0-9]+)>`)
)

func unmask(b []byte) []byte {
	b = ticketNumbers.ReplaceAllFunc(b, func(m []byte) []byte {
		n, _ := strconv.Atoi(string(ticketNumbers.FindSubmatch(m)[1]))
		return fmt.Appendf(nil, "TIX-%06d", n)
	})
	return masks.ReplaceAll(b, []byte("${1}_${2}"))
}
