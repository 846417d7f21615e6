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

// The embedded uPlot (script and stylesheet) is the npm package pinned in
// scripts/package.json, byte for byte, served from the dashboard's own path
// with the right types; so is the overview's chart script.
func TestStatic_UPlotIsThePinnedPackage(t *testing.T) {
	dir := testenv.PinnedNPM(t, "uplot", dashboard.UPlotVersion)
	srv := httptest.NewServer((&dashboard.Server{Settings: dashboard.DefaultSettings}).Handler())
	defer srv.Close()
	for served, c := range map[string]struct{ npm, ctype string }{
		"uplot.iife.min.js": {"dist/uPlot.iife.min.js", "text/javascript; charset=utf-8"},
		"uplot.min.css":     {"dist/uPlot.min.css", "text/css; charset=utf-8"},
		"overview.js":       {"", "text/javascript; charset=utf-8"},
	} {
		res, err := http.Get(srv.URL + "/dashboard/static/" + served)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK || len(got) == 0 || res.Header.Get("Content-Type") != c.ctype {
			t.Errorf("%s: %d, %d bytes, Content-Type %q", served, res.StatusCode, len(got), res.Header.Get("Content-Type"))
		}
		if c.npm == "" {
			continue
		}
		want, err := os.ReadFile(filepath.Join(dir, c.npm))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("served %s (%d bytes) differs from the npm package's %s (%d bytes)", served, len(got), c.npm, len(want))
		}
	}
}
