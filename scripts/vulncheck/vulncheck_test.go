// Package vulncheck_test checks scripts/vulncheck.sh, the govulncheck step of
// make test, against a made-up vulnerability database (testdata/db: one entry
// saying strings.ToUpper is vulnerable) and two tiny modules.
package vulncheck_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, db, module string) (string, error) {
	t.Helper()
	script, _ := filepath.Abs("../vulncheck.sh")
	dir, _ := filepath.Abs(filepath.Join("testdata", module))
	cmd := exec.Command("bash", script, dir)
	cmd.Env = append(cmd.Environ(), "TIX_VULNDB="+db)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func localDB(t *testing.T) string {
	abs, err := filepath.Abs(filepath.Join("testdata", "db"))
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + abs
}

// Code that calls a vulnerable function fails the check.
func TestVulncheck_CalledVulnerabilityFails(t *testing.T) {
	t.Parallel()
	out, err := run(t, localDB(t), "calls")
	if err == nil {
		t.Fatalf("passed with a called vulnerability:\n%s", out)
	}
	if !strings.Contains(out, "GO-2099-0001") || !strings.Contains(out, "calls vulnerable functions") {
		t.Fatalf("the failure does not name the vulnerability:\n%s", out)
	}
}

// A vulnerable function that is imported but never called does not fail.
func TestVulncheck_UncalledVulnerabilityPasses(t *testing.T) {
	t.Parallel()
	out, err := run(t, localDB(t), "imports")
	if err != nil {
		t.Fatalf("failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, "No vulnerabilities found") {
		t.Fatalf("no verdict in the output:\n%s", out)
	}
}

// An unreachable database is said plainly and does not fail.
func TestVulncheck_UnreachableDatabaseIsSkippedPlainly(t *testing.T) {
	t.Parallel()
	out, err := run(t, "https://vuln.invalid", "calls")
	if err != nil {
		t.Fatalf("failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, "SKIPPED, not run") || !strings.Contains(out, "https://vuln.invalid cannot be reached") {
		t.Fatalf("the skip is not said plainly:\n%s", out)
	}
}
