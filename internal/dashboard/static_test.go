package dashboard_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"tix/internal/dashboard"
	"tix/internal/testenv"
)

// The embedded htmx is the npm package pinned in scripts/package.json, byte
// for byte, and the dashboard serves it as JavaScript from its own path.
func TestStatic_HTMXIsThePinnedPackage(t *testing.T) {
	dir := testenv.PinnedNPM(t, "htmx.org", dashboard.HTMXVersion)
	want, err := os.ReadFile(filepath.Join(dir, "dist", "htmx.min.js"))
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
