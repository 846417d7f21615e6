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

// The embedded htmx and uPlot (script and stylesheet) are the npm packages
// pinned in scripts/package.json, byte for byte, served from the
// dashboard's own path with the right types; so is the overview's chart
// script (no package).
func TestStatic_EmbeddedAssetsAreThePinnedPackages(t *testing.T) {
	srv := httptest.NewServer((&dashboard.Server{Settings: dashboard.DefaultSettings}).Handler())
	defer srv.Close()
	const js, css = "text/javascript; charset=utf-8", "text/css; charset=utf-8"
	for _, c := range []struct{ served, pkg, version, npm, ctype string }{
		{"htmx.min.js", "htmx.org", dashboard.HTMXVersion, "dist/htmx.min.js", js},
		{"uplot.iife.min.js", "uplot", dashboard.UPlotVersion, "dist/uPlot.iife.min.js", js},
		{"uplot.min.css", "uplot", dashboard.UPlotVersion, "dist/uPlot.min.css", css},
		{"overview.js", "", "", "", js}, // no package: checked for its type only,
	} {
		res, err := http.Get(srv.URL + "/dashboard/static/" + c.served)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK || len(got) == 0 || res.Header.Get("Content-Type") != c.ctype {
			t.Errorf("%s: %d, %d bytes, Content-Type %q", c.served, res.StatusCode, len(got), res.Header.Get("Content-Type"))
		}
		if c.pkg == "" {
			continue
		}
		want, err := os.ReadFile(filepath.Join(testenv.PinnedNPM(t, c.pkg, c.version), c.npm))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("served %s (%d bytes) differs from the npm package %s's %s (%d bytes)", c.served, len(got), c.pkg, c.npm, len(want))
		}
	}
}
