package api_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"tix/internal/api/openapitest"
)

// TestMain checks, after the tests, the statuses the HTTP tests saw each
// operation answer (every response goes through openapitest) against the
// document: one it does not document fails the run. A run of the whole
// package also fails when a documented success (200, 201) was never produced,
// and lists (with -v) the documented pairs no test produced: mostly the
// generic 401/403/404/405/429/500 every operation documents.
func TestMain(m *testing.M) {
	code := m.Run()
	if v, ok := openapitest.Shared(); ok {
		undocumented, unobserved := v.StatusReport()
		if len(undocumented) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: statuses the API answered that the OpenAPI document does not list for the operation:\n  %s\n",
				strings.Join(undocumented, "\n  "))
			code = 1
		}
		if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
			// Every documented success must have been seen at least once.
			var successes []string
			for _, u := range unobserved {
				if strings.HasSuffix(u, " 200") || strings.HasSuffix(u, " 201") || strings.HasSuffix(u, " 2XX") {
					successes = append(successes, u)
				}
			}
			if len(successes) > 0 && code == 0 {
				fmt.Fprintf(os.Stderr, "FAIL: documented successes no test produced:\n  %s\n", strings.Join(successes, "\n  "))
				code = 1
			}
			if testing.Verbose() {
				fmt.Printf("openapitest: %d documented (operation, status) pairs no test produced:\n  %s\n",
					len(unobserved), strings.Join(unobserved, "\n  "))
			}
		}
	}
	os.Exit(code)
}
