package api_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
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
	// Every URL of the page is on tix: no CDN, no font service (the icon is
	// an empty data: URL, so browsers do not ask for /favicon.ico).
	srcs := regexp.MustCompile(`(?:src|href|spec-url)="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(srcs) < 2 {
		t.Fatalf("found %d URLs in the page", len(srcs))
	}
	for _, m := range srcs {
		if !strings.HasPrefix(m[1], "/v1/") && m[1] != "data:," {
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

	// The script's URL exactly as the page names it, query string included:
	// what a browser asks for.
	script := regexp.MustCompile(`<script src="(/v1/docs/[^"]+)"`).FindStringSubmatch(page)
	if script == nil {
		t.Fatalf("no script from /v1/docs/ in the page")
	}
	if !strings.Contains(script[1], "?v=") {
		t.Errorf("the script's URL %q names no version: browsers would keep an old bundle after an upgrade", script[1])
	}
	js := h.do("GET", script[1], "")
	wantStatus(t, js, http.StatusOK)
	if enc := js.Header.Get("Content-Encoding"); enc != "" {
		t.Errorf("a client that does not accept gzip got Content-Encoding %q", enc)
	}
	if ct := js.Header.Get("Content-Type"); ct != "text/javascript; charset=utf-8" || len(js.body) < 500_000 {
		t.Errorf("%s: Content-Type %q, %d bytes", script[1], ct, len(js.body))
	}
	if !bytes.Contains(js.body, []byte("Redoc")) {
		t.Errorf("%s is not the Redoc bundle", script[1])
	}
	gz := h.do("GET", script[1], "", func(r *http.Request) { r.Header.Set("Accept-Encoding", "br, gzip") })
	wantStatus(t, gz, http.StatusOK)
	if gz.Header.Get("Content-Encoding") != "gzip" || len(gz.body) > len(js.body)/2 {
		t.Errorf("gzip: Content-Encoding %q, %d bytes for %d", gz.Header.Get("Content-Encoding"), len(gz.body), len(js.body))
	} else if zr, err := gzip.NewReader(bytes.NewReader(gz.body)); err != nil {
		t.Error(err)
	} else if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, js.body) {
		t.Error("the gzip-encoded script differs from the plain one")
	}
	wantError(t, h.do("GET", "/v1/docs/nope.js", ""), http.StatusNotFound, "not_found", "")
}
