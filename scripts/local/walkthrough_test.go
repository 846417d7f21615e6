package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"tix/internal/config"
	"tix/internal/store"
	"tix/internal/testenv"
)

// The commands make run prints and the documented local walkthrough blocks (README.md and docs/) work
// when pasted: the real runner (built from this package) serves a fresh table
// on a free port against the test emulators, and bash runs the printed lines,
// then the documented blocks with the printed keys, through a curl wrapper that
// fails on any 4xx or 5xx. The printed tixctl lines carry the table they need.
func TestWalkthroughsWorkWhenPasted(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build(t, root, filepath.Join(bin, "tix-local"), "./scripts/local")
	build(t, root, filepath.Join(bin, "tixctl"), "./scripts/tixctl")

	table, addr, simAddr, scanAddr := testenv.UniqueName("tix-walk"), freeAddr(t), freeAddr(t), freeAddr(t)
	env := append(os.Environ(), "TIX_TABLE="+table, "TIX_ADDR="+addr, "TIX_DATA_DIR="+t.TempDir(), "TIX_ACQUIRER_SIM_ADDR="+simAddr,
		"TIX_SCAN_SIM_ADDR="+scanAddr,
		"TIX_DYNAMODB_ENDPOINT="+testenv.DynamoEndpoint(t), "TIX_SQS_ENDPOINT="+testenv.SQSEndpoint(t),
		"TIX_QUEUE_PREFIX="+testenv.UniqueName("tix-walk"), "TIX_LOG_LEVEL=warn",
		"TIX_SMTP_ADDR="+testenv.SMTPEndpoint(t), "TIX_MAILDEV_URL="+testenv.MailDevURL(t))
	out := startRunner(t, root, filepath.Join(bin, "tix-local"), env, table)
	welcome := out[strings.Index(out, "tix is running on"):]
	if !strings.Contains(welcome, "TIX_TABLE="+table+" go run ./scripts/tixctl") {
		t.Fatalf("the printed tixctl lines do not name the table %s:\n%s", table, welcome)
	}
	if !strings.Contains(welcome, "acquirer-sim pay $LIVE --url http://"+simAddr+"\n") || !regexp.MustCompile(`SIMULATED bank.*: sk_live_`).MatchString(welcome) {
		t.Fatalf("the live walkthrough does not pay at the simulator on %s, or its sk_live key is not labelled as simulated:\n%s", simAddr, welcome)
	}

	checkDashboardSignIn(t, welcome)

	// The receiver of the printed webhook lines answers with the body it got,
	// which holds endpoint.verify's nonce.
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(w, r.Body)
	}))
	defer rc.Close()
	printed := strings.ReplaceAll(commands(welcome), "http://127.0.0.1:9000/hooks", rc.URL+"/hooks")
	orderURL := "http://" + addr + "/v1/orders/$ORDER"
	waitEmail := strings.NewReplacer("$SK", regexp.MustCompile(`sk_test_[A-Za-z0-9]+`).FindString(welcome), "$URL", orderURL).Replace(printedOrderEmail)
	done := runShell(t, root, bin, env, "make run's commands", printed+waitEmail)
	// The printed test order's buyer is the demo organizer's test recipient:
	// its tickets email is sent (a stranger's would be skipped).
	if !strings.Contains(done, "printed order's email: tickets sent\n") {
		t.Errorf("the printed test order's tickets email was not sent:\n%s", done)
	}
	// The live order went through the simulator: paid, then refunded by the bank.
	if !strings.Contains(done, "status:    refunded") || !regexp.MustCompile(`refund:    rfd_\w+ completed`).MatchString(done) {
		t.Errorf("the live walkthrough did not end with the order refunded by the bank:\n%s", done)
	}

	keys := regexp.MustCompile(`(sk|pk)_test_[A-Za-z0-9]+`).FindAllString(welcome, 2)
	if len(keys) != 2 || !strings.HasPrefix(keys[0], "sk_") || !strings.HasPrefix(keys[1], "pk_") {
		t.Fatalf("demo keys not found in:\n%s", welcome)
	}
	base := "http://" + addr + "/v1"
	script := localWalkthrough(t, root)
	liveKey := regexp.MustCompile(`sk_live_[A-Za-z0-9]+`).FindString(welcome)
	for _, sub := range [][2]string{{"KEY=sk_test_...", "KEY=" + keys[0]}, {"PK=pk_test_...", "PK=" + keys[1]},
		{"BASE=http://127.0.0.1:8080/v1", "BASE=" + base}, {"LIVE_KEY=sk_live_...", "LIVE_KEY=" + liveKey},
		{"SIM=http://127.0.0.1:8089", "SIM=http://" + simAddr}, {"HOOKS=127.0.0.1:9000", "HOOKS=" + freeAddr(t)}} {
		if !strings.Contains(script, sub[0]) {
			t.Fatalf("the documented walkthrough no longer sets %q", sub[0])
		}
		script = strings.ReplaceAll(script, sub[0], sub[1])
	}
	// The documented tixctl lines reach the runner's table as a reader's do:
	// prefixed with what make run printed.
	prefix := regexp.MustCompile(`((?:TIX_\w+=\S+ )+)go run \./scripts/tixctl`).FindStringSubmatch(welcome)
	if prefix == nil {
		t.Fatalf("make run printed no tixctl line with its environment:\n%s", welcome)
	}
	script = strings.ReplaceAll(script, "go run ./scripts/tixctl", prefix[1]+"go run ./scripts/tixctl")
	runShell(t, root, bin, append(env, "TMPDIR="+t.TempDir()), "the documented walkthrough", script)

	// The simulated GitHub secret scanning (docs/secret-scanning.md, Locally):
	// a report of the live demo key revokes it, a random string is no key.
	report, err := exec.Command(filepath.Join(bin, "tixctl"), "scan-sim", "report", "--url", "http://"+scanAddr, liveKey, "not-a-key").CombinedOutput()
	if err != nil || !strings.Contains(string(report), "true_positive  sk_live_...") || !strings.Contains(string(report), "false_positive  (9 characters") {
		t.Fatalf("tixctl scan-sim report: %v\n%s", err, report)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/ping", nil)
	req.Header.Set("Authorization", "Bearer "+liveKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the live demo key after the simulated report: %d, want 401", res.StatusCode)
	}
}

func build(t *testing.T, root, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startRunner starts the local runner and returns its output once it has
// printed its welcome; it is interrupted (as Ctrl-C does) and its table
// dropped when the test ends.
func startRunner(t *testing.T, root, bin string, env []string, table string) string {
	t.Helper()
	var out testenv.SyncBuffer
	cmd := exec.Command(bin)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = root, env, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		st, err := store.Open(context.Background(), store.Options{Table: table, Region: "us-east-1", Endpoint: testenv.DynamoEndpoint(t)})
		if err == nil {
			_ = st.DeleteTable(context.Background())
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the runner's output:\n%s", out.String())
		}
	})
	testenv.WaitFor(t, 90*time.Second, "the runner's welcome", func() bool {
		select {
		case <-done:
			t.Fatal("the runner stopped before its welcome")
		default:
		}
		return strings.Contains(out.String(), "Operator CLI:")
	})
	return out.String()
}

// commands are the welcome's indented lines that are commands (not keys).
func commands(welcome string) string {
	var b strings.Builder
	cont := false
	for _, l := range strings.Split(welcome, "\n") {
		trimmed := strings.TrimSpace(l)
		isCmd := strings.HasPrefix(l, "  ") && (strings.HasPrefix(trimmed, "curl ") || strings.Contains(trimmed, "=$(") ||
			strings.Contains(trimmed, "go run ./scripts/tixctl") || strings.HasPrefix(trimmed, "for "))
		if isCmd || cont {
			b.WriteString(trimmed + "\n")
		}
		cont = (isCmd || cont) && strings.HasSuffix(trimmed, `\`)
	}
	return b.String()
}

// curlLine matches a line that runs curl.
var curlLine = regexp.MustCompile(`(?m)^\s*(\w+=\$\()?curl `)

// walkthroughPages are the pages whose marked blocks make the local
// walkthrough, in the order they run: each continues the shell of the one
// before.
var walkthroughPages = []string{"README.md", "docs/guide.md", "docs/live-payments.md", "docs/webhooks.md"}

// localWalkthrough is every sh block of walkthroughPages marked as the local
// walkthrough, in order. Every other block with a curl line, in those pages
// or any other page under docs/, must be about AWS.
func localWalkthrough(t *testing.T, root string) string {
	t.Helper()
	others, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	n, seen := 0, map[string]bool{}
	for _, page := range walkthroughPages {
		seen[filepath.Join(root, page)] = true
		n += walkthroughBlocks(t, root, page, &script)
	}
	for _, path := range others {
		if !seen[path] {
			rel, _ := filepath.Rel(root, path)
			if k := walkthroughBlocks(t, root, rel, io.Discard); k > 0 {
				t.Errorf("%s has %d local walkthrough blocks but is not in walkthroughPages", rel, k)
			}
		}
	}
	if n < 5 {
		t.Fatalf("%d local walkthrough blocks in %v, want the first sale, catalog, selling, live and webhook ones", n, walkthroughPages)
	}
	return script.String()
}

// walkthroughBlocks writes page's marked sh blocks to script and returns how
// many there were; an unmarked block with curl lines not about AWS is an error.
func walkthroughBlocks(t *testing.T, root, page string, script io.Writer) int {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range regexp.MustCompile("(?s)(<!-- local-walkthrough -->\n)?```sh\n(.*?)```").FindAllStringSubmatch(string(text), -1) {
		switch {
		case m[1] != "":
			_, _ = io.WriteString(script, m[2])
			n++
		case curlLine.MatchString(m[2]) && !strings.Contains(m[2], "aws "):
			t.Errorf("a block of %s with curl lines is not part of the tested walkthrough:\n%s", page, m[2])
		}
	}
	return n
}

// shellPrelude makes every curl of the script fail on a 4xx or 5xx (the
// script stops there) and runs "go run ./scripts/tixctl" from the built binary.
const shellPrelude = `set -euo pipefail
curl() {
  local out code
  out=$(mktemp)
  code=$(command curl -sS -o "$out" -w '%{http_code}' "$@") || { rm -f "$out"; echo "curl failed: $*" >&2; return 1; }
  cat "$out"; rm -f "$out"; echo
  if [ "$code" -ge 400 ]; then echo "HTTP $code from: curl $*" >&2; return 1; fi
}
go() {
  if [ "${1:-}" = run ] && [ "${2:-}" = ./scripts/tixctl ]; then shift 2; "$TIX_TEST_TIXCTL" "$@"; else command go "$@"; fi
}
`

// runShell runs script with bash and returns its output.
func runShell(t *testing.T, root, bin string, env []string, what, script string) string {
	t.Helper()
	if strings.Count(script, "curl ") < 3 {
		t.Fatalf("%s: too few curl lines:\n%s", what, script)
	}
	// Only the printed lines' own settings reach tixctl (no TIX_TABLE from the runner's environment).
	var clean []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TIX_TABLE=") && !strings.HasPrefix(kv, "TIX_DYNAMODB_ENDPOINT=") {
			clean = append(clean, kv)
		}
	}
	cmd := exec.Command("bash", "-c", shellPrelude+script)
	cmd.Dir, cmd.Env = root, append(clean, "TIX_TEST_TIXCTL="+filepath.Join(bin, "tixctl"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		o := out.String()
		if len(o) > 4000 {
			o = "..." + o[len(o)-4000:]
		}
		t.Fatalf("%s failed (%v):\n--- script\n%s\n--- output (its end)\n%s", what, err, script, o)
	}
	return out.String()
}

// printedOrderEmail waits up to 30 s for the printed order's tickets email
// to be done and prints its status ($SK and $URL are replaced by the test).
const printedOrderEmail = `for i in $(seq 150); do
  EMAIL=$(command curl -s -H "Authorization: Bearer $SK" "$URL" | python3 -c 'import sys,json
print(" ".join(e["kind"]+" "+e["status"] for e in json.load(sys.stdin).get("email") or []))')
  case "$EMAIL" in *pending*|*sending*|"") sleep 0.2;; *) break;; esac
done
echo "printed order's email: $EMAIL"
`

// With other ports, table or region, the printed tixctl lines carry them.
func TestTixctlEnv(t *testing.T) {
	cfg := config.Config{Table: "tix", Region: "us-east-1", DynamoDBEndpoint: "http://127.0.0.1:8000"}
	if got := tixctlEnv(cfg); got != "" {
		t.Errorf("defaults: %q, want nothing", got)
	}
	cfg = config.Config{Table: "tix-dev", Region: "eu-central-1", DynamoDBEndpoint: "http://127.0.0.1:8001"}
	if got, want := tixctlEnv(cfg), "TIX_DYNAMODB_ENDPOINT=http://127.0.0.1:8001 TIX_TABLE=tix-dev AWS_REGION=eu-central-1 "; got != want {
		t.Errorf("custom: %q, want %q", got, want)
	}
}

// checkDashboardSignIn signs in with the printed dashboard line and lands on
// the demo organizer's pages.
func checkDashboardSignIn(t *testing.T, welcome string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Dashboard: (\S+)  sign in: (\S+) / (\S+)$`).FindStringSubmatch(welcome)
	if m == nil {
		t.Fatalf("no Dashboard line in:\n%s", welcome)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm(m[1]+"signin", url.Values{"email": {m[2]}, "password": {m[3]}})
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in with the printed %s / %s: %d", m[2], m[3], res.StatusCode)
	}
	res, err = c.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(loc, "/o/org_demo/test/") {
		t.Errorf("the demo owner's dashboard: %d to %q, want the demo organizer", res.StatusCode, loc)
	}
}
