package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// runAppEnv makes the test binary run main (TestMain), so that a test can run
// the app as the cdk CLI does without building it again.
const runAppEnv = "TIX_INFRA_TEST_RUN_APP"

// The cdk CLI runs where cdk.json is (the repository) and hands the app paths
// relative to there: the output directory, the error file and the
// performance-counters file that aws-cdk-lib writes when synthesis takes
// longer than @aws-cdk/core.slowSynthThreshold (10 s by default; 0 here, so
// every synthesis writes it). cdk.json's app runs in infra/: each of those
// paths must land where the CLI reads them, or synth fails with ENOENT.
func TestApp_SlowSynthWritesWhereTheCLIReads(t *testing.T) {
	root := t.TempDir() // a repository as repoRoot finds it, with dummy builds
	for _, d := range []string{"functions", "infra", "cdk.out"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range Functions {
		dir := filepath.Join(root, "build", f.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, err := json.Marshal(map[string]any{"@aws-cdk/core.slowSynthThreshold": 0, "stage": "dev"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = filepath.Join(root, "infra") // cdk.json: "cd infra && go run ."
	cmd.Env = append(os.Environ(), runAppEnv+"=1", "CDK_CONTEXT_JSON="+string(ctx),
		// As aws-cdk's cxapp/exec.js sets them, from cdk.json's "output".
		"CDK_OUTDIR=cdk.out", "CDK_ERROR_FILE=cdk.out/error.txt", "CDK_PERF_COUNTERS_FILE=cdk.out/performance-counters.json")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the app failed: %v\n%s", err, tail(string(out), 3000))
	}
	for _, f := range []string{"performance-counters.json", "tix-dev.template.json", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(root, "cdk.out", f)); err != nil {
			t.Errorf("cdk.out/%s: %v\n%s", f, err, tail(string(out), 3000))
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
