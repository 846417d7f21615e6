package config_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestConfig_DependsOnNoFeaturePackage keeps dependencies pointing down:
// settings parse into plain values, and the feature packages (webhook,
// ticketing, store, api) build from them in internal/app.
func TestConfig_DependsOnNoFeaturePackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "tix/internal/config").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{"tix/internal/config": true, "tix/internal/keyring": true}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "tix/") && !allowed[pkg] {
			t.Errorf("internal/config depends on %s", pkg)
		}
	}
}
