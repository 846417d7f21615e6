package apidocs_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"tix/internal/apidocs"
	"tix/internal/testenv"
)

// The committed bundle is the pinned npm package's file, byte for byte once
// decompressed, and the version the code names is the one scripts/package.json
// pins (make setup installs it in scripts/node_modules).
func TestRedoc_IsThePinnedPackagesBundle(t *testing.T) {
	bundles := filepath.Join(testenv.PinnedNPM(t, "redoc", apidocs.RedocVersion), "bundles")
	files := apidocs.Redoc().Files
	for name, f := range files {
		want, err := os.ReadFile(filepath.Join(bundles, name))
		if err != nil {
			t.Fatal(err)
		}
		got := f.Body
		if f.Gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(f.Body))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("the embedded %s differs from redoc %s's bundles/%s: copy it again (docs/openapi.md)", name, apidocs.RedocVersion, name)
		}
	}
	if f, ok := files[apidocs.Redoc().Script]; !ok || !f.Gzipped {
		t.Errorf("the page's script %q is not an embedded, compressed file", apidocs.Redoc().Script)
	}
}
