package testenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// apiFunctions are the Lambda functions behind the HTTP API; timers does
// delayed and periodic work. Neither sends email: they write email jobs, and
// the deliver function alone carries the sender and the renderer.
var (
	apiFunctions  = []string{"catalog", "holds", "orders", "webhooks", "checkins"}
	lightweight   = append(append([]string{}, apiFunctions...), "timers")
	buildFlags    = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"} // the Makefile's
	lambdaEnv     = []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"}
	apiSizeLimit  = int64(11 << 20) // 11 MB, as make build prints it (docs/measurements.md, Start-up)
	heavyPackages = []string{
		"tix/internal/emailrender",   // templates, QR codes, the tickets' PDF
		"tix/internal/emailsend/ses", // the SES adapter
		"tix/internal/app/sending",   // the wiring of both
		"github.com/aws/aws-sdk-go-v2/service/sesv2",
		"github.com/go-pdf/fpdf",
		"golang.org/x/image/",
		"html/template",
		"text/template",
		"go.yaml.in/yaml/", // the OpenAPI document is embedded as JSON
	}
)

// deps lists the packages pkg depends on (itself included) as the Lambda
// build sees them.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, append(buildFlags[:2:2], pkg)...)...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), lambdaEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

// forbid reports each of pkg's dependencies whose path starts with one of
// the prefixes.
func forbid(t *testing.T, pkg, why string, prefixes ...string) {
	t.Helper()
	for _, d := range deps(t, pkg) {
		for _, p := range prefixes {
			if strings.HasPrefix(d, p) {
				t.Errorf("%s depends on %s: %s", pkg, d, why)
			}
		}
	}
}

// Dependencies point down and along the subsystems: the webhook delivery
// knows nothing of email (the email pipeline follows the outbox as one of its
// subscribers), and the email packages build from plain values (internal/app
// reads the configuration).
func TestDependenciesPointTheRightWay(t *testing.T) {
	forbid(t, "tix/internal/webhook", "the email pipeline subscribes to the outbox (webhook.Subscriber); delivery must not know it", "tix/internal/email", "tix/internal/mail")
	for _, p := range []string{"tix/internal/emailjobs", "tix/internal/emailsend/...", "tix/internal/emailrender"} {
		forbid(t, p, "email builds from plain values; internal/app and internal/app/sending read the configuration", "tix/internal/config", "tix/internal/app")
	}
}

// Each function carries only what it serves: the HTTP API and timers
// functions link no renderer, no SES client, no YAML parser.
func TestFunctionsLinkOnlyWhatTheyServe(t *testing.T) {
	for _, f := range lightweight {
		forbid(t, "tix/functions/"+f, "only the deliver function renders and sends email (internal/app/sending)", heavyPackages...)
	}
	// The dashboard renders its pages (html/template) but sends no email:
	// it writes email jobs, which the deliver function sends.
	forbid(t, "tix/functions/dashboard", "only the deliver function renders and sends email (internal/app/sending)",
		"tix/internal/emailrender", "tix/internal/emailsend/ses", "tix/internal/app/sending")
	// deliver does carry them: otherwise this test would prove nothing.
	if d := deps(t, "tix/functions/deliver"); !slices.Contains(d, "tix/internal/emailrender") || !slices.Contains(d, "tix/internal/emailsend/ses") {
		t.Error("functions/deliver does not wire the renderer and the SES sender")
	}
}

// TestAPIFunctionsBootstrapsAreAtMost11MB builds each HTTP API function as
// make build does (linux/arm64, stripped) and weighs it.
func TestAPIFunctionsBootstrapsAreAtMost11MB(t *testing.T) {
	dir := t.TempDir()
	for _, f := range apiFunctions {
		out := filepath.Join(dir, f)
		cmd := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", out, "./functions/"+f)...)
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), lambdaEnv...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build functions/%s: %v\n%s", f, err, b)
		}
		st, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("functions/%s: %.2f MB (%d bytes)", f, float64(st.Size())/(1<<20), st.Size())
		if st.Size() > apiSizeLimit {
			t.Errorf("functions/%s's linux/arm64 bootstrap is %.2f MB, over the 11 MB limit: see what it links with go list -deps ./functions/%s", f, float64(st.Size())/(1<<20), f)
		}
	}
}
