package apidocs_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"tix/internal/apidocs"
)

// The committed bundle is the pinned npm package's file, byte for byte once
// decompressed, and the version the code names is the one scripts/package.json
// pins (make setup installs it in scripts/node_modules).
func TestRedoc_IsThePinnedPackagesBundle(t *testing.T) {
	scripts := filepath.Join("..", "..", "scripts")
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, filepath.Join(scripts, "package.json"), &pkg)
	if pkg.Dependencies["redoc"] != apidocs.RedocVersion {
		t.Errorf("scripts/package.json pins redoc %q, the code serves %s", pkg.Dependencies["redoc"], apidocs.RedocVersion)
	}
	var installed struct {
		Version string `json:"version"`
	}
	readJSON(t, filepath.Join(scripts, "node_modules", "redoc", "package.json"), &installed)
	if installed.Version != apidocs.RedocVersion {
		t.Fatalf("scripts/node_modules has redoc %s, want %s: run make setup", installed.Version, apidocs.RedocVersion)
	}
	bundles := filepath.Join(scripts, "node_modules", "redoc", "bundles")
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
