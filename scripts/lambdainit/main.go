// Command lambdainit measures how long each Lambda function takes from the
// start of its process to its answer to the first event: a stand-in for a cold
// start's init plus first invoke (target: under 50 ms). It builds the real
// bootstrap of every functions/* for this host, serves a minimal fake of the
// Lambda Runtime API (2018-06-01, the endpoints the aws-lambda-go runtime
// client calls) on 127.0.0.1, starts the bootstrap against it with the TIX_*
// configuration of the local stack (DynamoDB Local, fauxqs; a fresh table
// with an organizer, a secret test key and an event), hands it one sample
// event of events/ and times the response POST. Each function is started
// -n times; p50 and max are printed, with the size of its stripped
// linux/arm64 bootstrap (as `make build` makes it). Every function but
// deliver, the one that carries the email renderer and sender, must be at
// most 11 MB: it exits 1 when one is over.
//
//	go run ./scripts/lambdainit -n 20     (make init-time)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"tix/internal/app"
	"tix/internal/auth"
	"tix/internal/awscfg"
	"tix/internal/config"
	"tix/internal/ticketing"
)

// sampleEvent is the event each function is started with: one that reaches
// DynamoDB (key check, reads), as a real first request would.
var sampleEvent = map[string]string{
	"catalog":  "catalog-get-event.json",
	"holds":    "holds-release.json",
	"orders":   "orders-get-unknown.json",
	"webhooks": "webhooks-list-endpoints.json",
	"checkins": "checkins-ticket-keys.json",
	"deliver":  "deliver-batch.json",
	"timers":   "timers-batch.json",
}

const (
	runtimeAPI = "/2018-06-01/runtime"
	// sourceIP is the address the sample API events come from (the fixture key allows only it).
	sourceIP = "198.51.100.7"
	region   = "us-east-1"
	// queuePrefix is fixed: CreateQueue of an existing queue is a no-op, so
	// reruns reuse the same two queues (and their dead-letter queues).
	queuePrefix = "tix-lambdainit"
)

func main() {
	n := flag.Int("n", 20, "cold starts per function")
	only := flag.String("functions", "", "comma-separated functions to measure (default: every functions/*)")
	dynamo := flag.String("dynamodb", envOr("TIX_DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"), "DynamoDB endpoint")
	sqs := flag.String("sqs", envOr("TIX_SQS_ENDPOINT", "http://127.0.0.1:4566"), "SQS endpoint")
	targetMS := flag.Float64("target-ms", 50, "start-up target per function, in milliseconds")
	limitMB := flag.Float64("limit-mb", 11, "size limit of a linux/arm64 bootstrap, in MB (every function but deliver)")
	timeout := flag.Duration("timeout", 20*time.Second, "longest wait for one start's first answer")
	flag.Parse()
	if err := run(options{n: *n, only: *only, dynamo: *dynamo, sqs: *sqs, target: time.Duration(*targetMS * float64(time.Millisecond)),
		limitMB: *limitMB, timeout: *timeout}); err != nil {
		fmt.Fprintln(os.Stderr, "lambdainit:", err)
		os.Exit(1)
	}
}

type options struct {
	n           int
	only        string
	dynamo, sqs string
	target      time.Duration
	limitMB     float64
	timeout     time.Duration
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// result is one function's measurements.
type result struct {
	name, event string
	answer      string          // what the first answer was (HTTP status, batch failures)
	init        []time.Duration // process start -> first GET .../invocation/next
	first       []time.Duration // process start -> POST .../response
	armBytes    int64
}

func run(o options) error {
	functions, err := preflight(o)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "tix-lambdainit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	results, err := buildAll(tmp, functions)
	if err != nil {
		return err
	}

	env, cleanup, err := fixture(o)
	if err != nil {
		return err
	}
	defer cleanup()

	rt, err := startRuntimeAPI()
	if err != nil {
		return err
	}
	defer rt.close()
	fmt.Printf("==> Fake Lambda Runtime API (2018-06-01) on %s\n", rt.addr)

	for _, r := range results {
		if err := coldStarts(r, rt, env, filepath.Join(tmp, "host", r.name, "bootstrap"), o); err != nil {
			return err
		}
	}
	return report(results, o)
}

// unlimited is the function the size limit leaves out: deliver carries the
// email renderer (templates, QR, PDF) and the SES sender (internal/app/sending).
const unlimited = "deliver"

// preflight checks the options, the working directory and the emulators, and
// returns the functions to measure.
func preflight(o options) ([]string, error) {
	if o.n < 1 {
		return nil, errors.New("-n must be at least 1")
	}
	if _, err := os.Stat("functions"); err != nil {
		return nil, errors.New("run it from the repository root (make init-time)")
	}
	functions, err := functionNames(o.only)
	if err != nil {
		return nil, err
	}
	for _, ep := range []struct{ name, url, hint string }{
		{"DynamoDB Local", o.dynamo, "DynamoDB"}, {"fauxqs (SQS)", o.sqs, "SQS"},
	} {
		if err := reachable(ep.url); err != nil {
			return nil, fmt.Errorf("%s does not answer at %s (%v); start the emulators: TIX_STACK_SESSION=hinit scripts/stack.sh start --memory", ep.name, ep.url, err)
		}
	}
	return functions, nil
}

// buildAll builds each function under tmp for this host (host/<f>/bootstrap,
// timed) and for linux/arm64 (arm64/<f>/bootstrap, weighed).
func buildAll(tmp string, functions []string) ([]*result, error) {
	results := make([]*result, 0, len(functions))
	fmt.Printf("==> Building %d functions: for this host (%s/%s) to time, and for linux/arm64 (as make build) to weigh\n",
		len(functions), goEnv("GOOS"), goEnv("GOARCH"))
	for _, f := range functions {
		host := filepath.Join(tmp, "host", f, "bootstrap")
		arm := filepath.Join(tmp, "arm64", f, "bootstrap")
		if err := build(f, host, nil); err != nil {
			return nil, err
		}
		if err := build(f, arm, []string{"GOOS=linux", "GOARCH=arm64"}); err != nil {
			return nil, err
		}
		st, err := os.Stat(arm)
		if err != nil {
			return nil, err
		}
		fmt.Printf("    %-9s linux/arm64 bootstrap %.1f MB (%d bytes)\n", f, mb(st.Size()), st.Size())
		results = append(results, &result{name: f, event: sampleEvent[f], armBytes: st.Size()})
	}
	return results, nil
}

// coldStarts starts bin o.n times, each answering the function's sample
// event, and records the init and first-answer times in r.
func coldStarts(r *result, rt *runtimeAPIServer, env fixtureEnv, bin string, o options) error {
	if r.event == "" {
		return fmt.Errorf("no sample event chosen for function %s: add it to sampleEvent", r.name)
	}
	payload, err := loadEvent(r.event, env.vars)
	if err != nil {
		return err
	}
	fmt.Printf("==> %s: %d cold starts, each answering events/%s ", r.name, o.n, r.event)
	for i := range o.n {
		s, err := rt.coldStart(bin, env.processEnv(r.name, rt.addr), payload, o.timeout)
		if err != nil {
			fmt.Println()
			return fmt.Errorf("%s, start %d: %w", r.name, i+1, err)
		}
		r.init, r.first = append(r.init, s.init), append(r.first, s.first)
		r.answer = s.answer
		fmt.Print(".")
	}
	fmt.Printf(" p50 %s (%s)\n", ms(percentile(r.first, 50)), r.answer)
	return nil
}

// functionNames are the folders of functions/, or those of -functions.
func functionNames(only string) ([]string, error) {
	dirs, err := os.ReadDir("functions")
	if err != nil {
		return nil, err
	}
	var all []string
	for _, d := range dirs {
		if d.IsDir() {
			all = append(all, d.Name())
		}
	}
	if only == "" {
		return all, nil
	}
	var out []string
	for f := range strings.SplitSeq(only, ",") {
		if f = strings.TrimSpace(f); !slices.Contains(all, f) {
			return nil, fmt.Errorf("-functions: no function %q (there are %v)", f, all)
		}
		out = append(out, f)
	}
	return out, nil
}

func reachable(rawURL string) error {
	host := strings.TrimPrefix(strings.TrimPrefix(rawURL, "http://"), "https://")
	host, _, _ = strings.Cut(host, "/")
	c, err := net.DialTimeout("tcp", host, time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

func goEnv(k string) string {
	out, err := exec.Command("go", "env", k).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// build compiles functions/<f> as make build does (static, no RPC, stripped).
func build(f, out string, env []string) error {
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, "./functions/"+f)
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build functions/%s %v: %v\n%s", f, env, err, b)
	}
	return nil
}

// fixtureEnv is the configuration every started function gets, and the
// values of the sample events' placeholders.
type fixtureEnv struct {
	tix  map[string]string
	vars map[string]string
}

// processEnv is a function's whole environment, as Lambda sets it (a few of
// its variables) plus the TIX_* configuration; nothing is inherited.
func (e fixtureEnv) processEnv(function, runtimeAddr string) []string {
	env := []string{
		"AWS_LAMBDA_RUNTIME_API=" + runtimeAddr,
		"AWS_LAMBDA_FUNCTION_NAME=tix-" + function,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024",
		"_HANDLER=bootstrap",
		"AWS_REGION=" + region,
		"AWS_DEFAULT_REGION=" + region,
		"AWS_ACCESS_KEY_ID=local",
		"AWS_SECRET_ACCESS_KEY=local",
		"TZ=:UTC",
		"TIX_EMULATOR_KEY_ID=" + awscfg.EmulatorKeyID(), // the same DynamoDB Local database as the fixture's table
	}
	for k, v := range e.tix {
		env = append(env, k+"="+v)
	}
	return env
}

// fixture creates a fresh table (organizer, secret test key, event) and the
// queues, and returns the functions' configuration and a cleanup that drops the table.
func fixture(o options) (fixtureEnv, func(), error) {
	ctx := context.Background()
	table := fmt.Sprintf("tix-lambdainit-%d", time.Now().UnixNano())
	tix := map[string]string{
		"TIX_TABLE":             table,
		"TIX_DYNAMODB_ENDPOINT": o.dynamo,
		"TIX_SQS_ENDPOINT":      o.sqs,
		"TIX_QUEUE_PREFIX":      queuePrefix,
		"TIX_CURSOR_SECRET":     "lambdainit-cursor-secret",
		"TIX_WEBHOOK_KEYRING":   config.LocalKeyring,
		// Many starts share one key: lift the per-key budget, this measures start-up.
		"TIX_RATE_READS": "1000000",
	}
	cfg, err := config.Load(func(k string) string {
		if k == "AWS_REGION" {
			return region
		}
		return tix[k]
	})
	if err != nil {
		return fixtureEnv{}, nil, err
	}
	cfg.LogLevel = "error"
	app.Logger(cfg)
	a, err := app.New(ctx, cfg, nil)
	if err != nil {
		return fixtureEnv{}, nil, err
	}
	fmt.Printf("==> Creating table %s on %s and queues %s-* on %s\n", table, o.dynamo, queuePrefix, o.sqs)
	if _, err := a.Store.EnsureTable(ctx); err != nil {
		return fixtureEnv{}, nil, err
	}
	cleanup := func() {
		fmt.Printf("==> Dropping table %s\n", table)
		_ = a.Store.DeleteTable(context.Background())
	}
	fail := func(err error) (fixtureEnv, func(), error) { cleanup(); return fixtureEnv{}, nil, err }
	if _, err := a.Queue.EnsureQueues(ctx); err != nil {
		return fail(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	if err := a.Store.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_init", Name: "Init", CreatedAt: now}); err != nil {
		return fail(err)
	}
	secret := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	if err := a.Store.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_init", Type: auth.Secret, Environment: ticketing.EnvTest,
		Scopes: auth.AllScopes, AllowedIPs: []string{sourceIP}, CreatedAt: now}, auth.Hash(secret)); err != nil {
		return fail(err)
	}
	slug := "init-show"
	ev := &ticketing.Event{ID: "evt_init", OrganizerID: "org_init", Ref: "init", Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "Init Show", Slug: &slug, City: "Kazan", Venue: "Hall", StartsAt: now.Add(48 * time.Hour), EndsAt: now.Add(50 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{{ID: "tier_init", Name: "GA", Price: 100000, Capacity: 100, PersonsIncluded: 1, Color: "#000000"}}}
	if err := a.Store.Catalog.PutEvent(ctx, ev); err != nil {
		return fail(err)
	}
	return fixtureEnv{tix: tix, vars: map[string]string{"SK_TEST": secret, "EVENT_ID": ev.ID, "EVENT_SLUG": slug,
		"TIER_ID": "tier_init", "SEAT_ID": "seat_init"}}, cleanup, nil
}

var placeholder = regexp.MustCompile(`\{\{[A-Z0-9_]+\}\}`)

// loadEvent reads events/<name>, fills its placeholders and drops _expect
// (the tests' field, which API Gateway does not send).
func loadEvent(name string, vars map[string]string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join("events", name))
	if err != nil {
		return nil, err
	}
	s := string(raw)
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	if left := placeholder.FindAllString(s, -1); len(left) > 0 {
		return nil, fmt.Errorf("events/%s: placeholders %v have no value here; choose another sample event", name, left)
	}
	var ev map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &ev); err != nil {
		return nil, fmt.Errorf("events/%s: %w", name, err)
	}
	delete(ev, "_expect")
	return json.Marshal(ev)
}

// percentile is the nearest-rank percentile p of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(i, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func report(rs []*result, o options) error {
	fmt.Printf("\nStart-up: process start to the response POST of the first event (%d starts each; init = to the first GET .../next)\n\n", o.n)
	fmt.Printf("%-9s  %-29s  %-26s  %9s  %12s  %12s  %12s\n", "function", "event", "first answer", "init p50", "answer p50", "answer max", "arm64 size")
	var slow, big []string
	for _, r := range rs {
		p50 := percentile(r.first, 50)
		fmt.Printf("%-9s  %-29s  %-26s  %9s  %12s  %12s  %9.1f MB\n", r.name, r.event, r.answer,
			ms(percentile(r.init, 50)), ms(p50), ms(slices.Max(r.first)), mb(r.armBytes))
		if p50 > o.target {
			slow = append(slow, fmt.Sprintf("%s (p50 %s)", r.name, ms(p50)))
		}
		if mb(r.armBytes) > o.limitMB && r.name != unlimited {
			big = append(big, fmt.Sprintf("%s (%.1f MB)", r.name, mb(r.armBytes)))
		}
	}
	fmt.Println()
	if len(slow) == 0 {
		fmt.Printf("Every function's p50 is under the %s target.\n", ms(o.target))
	} else {
		fmt.Printf("OVER the %s target: %s\n", ms(o.target), strings.Join(slow, ", "))
	}
	if len(big) > 0 {
		return fmt.Errorf("OVER the %.0f MB limit: %s (see what each links: go list -deps ./functions/<name>)", o.limitMB, strings.Join(big, ", "))
	}
	fmt.Printf("Every linux/arm64 bootstrap but %s's is within the %.0f MB limit.\n", unlimited, o.limitMB)
	return nil
}
