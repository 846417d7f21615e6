package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tix/internal/api"
)

// GET /v1/docs is an HTML page, served without a key, that renders
// /v1/openapi.json with the embedded Redoc and loads nothing from elsewhere.
func TestDocs_RendersTheDocumentWithTheEmbeddedRedoc(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/docs", "")
	wantStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	page := string(r.body)
	if !strings.Contains(page, `spec-url="/v1/openapi.json"`) {
		t.Errorf("the page does not render /v1/openapi.json:\n%s", page)
	}
	// Every URL of the page is on tix: no CDN, no font service.
	srcs := regexp.MustCompile(`(?:src|href|spec-url)="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(srcs) < 2 {
		t.Fatalf("found %d URLs in the page", len(srcs))
	}
	for _, m := range srcs {
		if !strings.HasPrefix(m[1], "/v1/") {
			t.Errorf("the page loads %q, not from /v1/", m[1])
		}
	}
	if strings.Contains(page, "//") && regexp.MustCompile(`https?://`).MatchString(page) {
		t.Errorf("the page names another site:\n%s", page)
	}
	csp := r.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("Content-Security-Policy %q does not keep the page to tix", csp)
	}

	script := regexp.MustCompile(`<script src="(/v1/docs/[^"?]+)`).FindStringSubmatch(page)
	if script == nil {
		t.Fatalf("no script from /v1/docs/ in the page")
	}
	js := h.do("GET", script[1], "")
	wantStatus(t, js, http.StatusOK)
	if ct := js.Header.Get("Content-Type"); ct != "text/javascript; charset=utf-8" || len(js.body) < 500_000 {
		t.Errorf("%s: Content-Type %q, %d bytes", script[1], ct, len(js.body))
	}
	if !bytes.Contains(js.body, []byte("Redoc")) {
		t.Errorf("%s is not the Redoc bundle", script[1])
	}
	wantError(t, h.do("GET", "/v1/docs/nope.js", ""), http.StatusNotFound, "not_found", "")
}

// The committed bundle is the pinned npm package's file, byte for byte, and
// the version the code names is the one scripts/package.json pins (make setup
// installs it in scripts/node_modules).
func TestDocs_BundleIsThePinnedRedoc(t *testing.T) {
	scripts := filepath.Join("..", "..", "scripts")
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, filepath.Join(scripts, "package.json"), &pkg)
	if pkg.Dependencies["redoc"] != api.RedocVersion {
		t.Errorf("scripts/package.json pins redoc %q, the code serves %s", pkg.Dependencies["redoc"], api.RedocVersion)
	}
	var installed struct {
		Version string `json:"version"`
	}
	readJSON(t, filepath.Join(scripts, "node_modules", "redoc", "package.json"), &installed)
	if installed.Version != api.RedocVersion {
		t.Fatalf("scripts/node_modules has redoc %s, want %s: run make setup", installed.Version, api.RedocVersion)
	}
	for _, f := range []string{"redoc.standalone.js", "redoc.standalone.js.LICENSE.txt"} {
		want, err := os.ReadFile(filepath.Join(scripts, "node_modules", "redoc", "bundles", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("redoc", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("internal/api/redoc/%s differs from redoc %s's bundles/%s: copy it again (see README)", f, api.RedocVersion, f)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run make setup)", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
