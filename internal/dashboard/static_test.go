package dashboard_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"tix/internal/dashboard"
)

// The embedded htmx is the npm package pinned in scripts/package.json, byte
// for byte, and the dashboard serves it as JavaScript from its own path.
func TestStatic_HTMXIsThePinnedPackage(t *testing.T) {
	root := filepath.Join("..", "..", "scripts")
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil || json.Unmarshal(b, &pkg) != nil {
		t.Fatalf("scripts/package.json: %v", err)
	}
	var installed struct {
		Version string `json:"version"`
	}
	b, err = os.ReadFile(filepath.Join(root, "node_modules", "htmx.org", "package.json"))
	if err != nil || json.Unmarshal(b, &installed) != nil {
		t.Fatalf("htmx.org in scripts/node_modules (make setup installs it): %v", err)
	}
	if pkg.Dependencies["htmx.org"] != dashboard.HTMXVersion || installed.Version != dashboard.HTMXVersion {
		t.Errorf("htmx.org: pinned %q, installed %q, embedded %q", pkg.Dependencies["htmx.org"], installed.Version, dashboard.HTMXVersion)
	}
	want, err := os.ReadFile(filepath.Join(root, "node_modules", "htmx.org", "dist", "htmx.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&dashboard.Server{Settings: dashboard.DefaultSettings}).Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL + "/dashboard/static/htmx.min.js")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
		t.Errorf("served htmx.min.js: %d, %d bytes, differs from the npm package's %d bytes", res.StatusCode, len(got), len(want))
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/javascript; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
}
