package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// PinnedNPM checks that scripts/package.json pins the npm package name at
// version and that scripts/node_modules holds that version (make setup
// installs it), and returns the installed package's directory: the source
// an embedded asset must match byte for byte.
func PinnedNPM(tb testing.TB, name, version string) string {
	tb.Helper()
	_, here, _, _ := runtime.Caller(0)
	scripts := filepath.Join(filepath.Dir(here), "..", "..", "scripts")
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSONFile(tb, filepath.Join(scripts, "package.json"), &pkg)
	if pkg.Dependencies[name] != version {
		tb.Errorf("scripts/package.json pins %s %q, the code embeds %s", name, pkg.Dependencies[name], version)
	}
	dir := filepath.Join(scripts, "node_modules", name)
	var installed struct {
		Version string `json:"version"`
	}
	readJSONFile(tb, filepath.Join(dir, "package.json"), &installed)
	if installed.Version != version {
		tb.Fatalf("scripts/node_modules has %s %s, want %s: run make setup", name, installed.Version, version)
	}
	return dir
}

func readJSONFile(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%s: %v (make setup installs the npm tools)", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}
