package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tixapp "tix/internal/app"
	"tix/internal/auth"
	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// listenWorld is a whole app on DynamoDB Local and fauxqs behind the real
// router, an sk_test key of its organizer, and the Go sample receiver.
type listenWorld struct {
	t       *testing.T
	a       *tixapp.App
	api, sk string
	tenant  ticketing.Tenant
}

func newListenWorld(t *testing.T) *listenWorld {
	t.Helper()
	a := lambdaenv.New(t).App
	w := &listenWorld{t: t, a: a, tenant: ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}}
	w.sk = auth.NewSecret(auth.Secret, ticketing.EnvTest)
	if err := a.Store.Keys.CreateKey(t.Context(), auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_l", Type: auth.Secret,
		Environment: ticketing.EnvTest, Scopes: auth.AllScopes, Last4: w.sk[len(w.sk)-4:], CreatedAt: time.Now().UTC()}, auth.Hash(w.sk)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Server.Handler())
	t.Cleanup(srv.Close)
	w.api = srv.URL + "/v1"
	return w
}

// goReceiver builds and starts the Go sample receiver with secret.
func goReceiver(t *testing.T, secret string) (string, *testenv.SyncBuffer) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "webhookreceiver")
	if out, err := exec.Command("go", "build", "-o", bin, "tix/scripts/webhookreceiver").CombinedOutput(); err != nil {
		t.Fatalf("go build the sample receiver: %v\n%s", err, out)
	}
	return testenv.StartListening(t, bin, "--addr", "127.0.0.1:0", "--secret", secret)
}

// orders sells n one-ticket orders at once and settles them with outcome.
func (w *listenWorld) orders(n int, outcome string) {
	w.t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			tier, qty, email := "tier_l", 1, "buyer@example.com"
			created, err := w.a.Sales.Orders.CreateOrder(context.Background(), ticketing.Caller{Tenant: w.tenant, KeyID: "key_l"},
				auth.NewKeyID(), ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty})
			if err == nil {
				_, err = w.a.Sales.Orders.Simulate(context.Background(), w.tenant, created.Order.ID, outcome)
			}
			if err != nil {
				w.t.Error(err)
			}
		})
	}
	wg.Wait()
}

// eventIDs are the ids of every event in the organizer's log, by type.
func (w *listenWorld) eventIDs() map[string]string {
	w.t.Helper()
	p, err := w.a.Webhooks.Events(context.Background(), webhook.EventQuery{OrganizerID: "org_l", Environment: ticketing.EnvTest, Limit: 100})
	if err != nil || p.HasMore {
		w.t.Fatalf("the log: %+v %v", p, err)
	}
	ids := map[string]string{}
	for _, ev := range p.Events {
		ids[ev.ID] = ev.Type
	}
	return ids
}

// listenRun is tixctl listen --json running in this process until stop.
type listenRun struct {
	out  *testenv.SyncBuffer
	stop context.CancelFunc
	code chan int
}

func (w *listenWorld) listen(args ...string) *listenRun {
	w.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &listenRun{out: &testenv.SyncBuffer{}, stop: cancel, code: make(chan int, 1)}
	a := newApp(r.out, r.out, nil)
	a.parent = ctx
	go func() {
		r.code <- a.run(append([]string{"listen", "--json", "--api", w.api, "--key", w.sk, "--interval", "100ms"}, args...))
	}()
	w.t.Cleanup(func() { cancel(); <-r.code })
	testenv.WaitFor(w.t, 10*time.Second, "tixctl listen ready", func() bool { return strings.Contains(r.out.String(), `"kind":"ready"`) })
	return r
}

// lines decodes the JSON lines printed so far.
func (r *listenRun) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.out.String()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// forwarded are the event ids of the forward lines, each with how often it came.
func (r *listenRun) forwarded(t *testing.T) map[string]int {
	seen := map[string]int{}
	for _, l := range r.lines(t) {
		if l["kind"] == "forward" {
			if l["ok"] != true || l["status"] != 200.0 || l["attempts"] != 1.0 || l["order_id"] == "" {
				t.Errorf("forward line %v, want ok, 200, 1 attempt, the order id", l)
			}
			seen[l["event_id"].(string)]++
		}
	}
	return seen
}

// tixctl listen forwards every event written after it started, once, in
// bursts that share a timestamp and span pages of 2, to the Go sample
// receiver, which verifies each (Standard Webhooks, the printed secret);
// an earlier event is not forwarded; Ctrl-C ends it with exit 0. A second
// run with --since and --events forwards the earlier event and only the type
// asked for, which the receiver drops as already handled.
func TestListen_ForwardsEveryEventOnceToTheGoSampleReceiver(t *testing.T) {
	t.Parallel()
	w := newListenWorld(t)
	secret := webhook.NewSecret()
	hook, received := goReceiver(t, secret)
	w.orders(1, ticketing.OutcomePaid)
	before := w.eventIDs()

	run := w.listen("--forward-to", hook, "--secret", secret, "--page-size", "2")
	if l := run.lines(t)[0]; l["secret"] != secret || l["forward_to"] != hook || l["api"] != w.api {
		t.Errorf("ready line %v", l)
	}
	w.orders(4, ticketing.OutcomePaid)
	w.orders(3, ticketing.OutcomeCancelled)
	all := w.eventIDs()
	testenv.WaitFor(t, 20*time.Second, "7 events forwarded", func() bool { return len(run.forwarded(t)) == 7 })
	run.stop()
	if code := <-run.code; code != 0 {
		t.Errorf("exit %d after Ctrl-C, want 0", code)
	}
	run.code <- 0 // for the cleanup
	lines := run.lines(t)
	if last := lines[len(lines)-1]; last["kind"] != "stopped" || last["forwarded"] != 7.0 || last["failed"] != 0.0 {
		t.Errorf("last line %v, want stopped with 7 forwarded", last)
	}
	got := run.forwarded(t)
	for id := range all {
		_, old := before[id]
		if want := map[bool]int{true: 0, false: 1}[old]; got[id] != want || strings.Count(received.String(), " "+id+" ") != want {
			t.Errorf("event %s (before the start: %v) forwarded %d times, the receiver verified it %d times; want %d",
				id, old, got[id], strings.Count(received.String(), " "+id+" "), want)
		}
	}
	if strings.Contains(received.String(), "REFUSED") || strings.Count(received.String(), "verified order.") != 7 {
		t.Errorf("the receiver printed:\n%s", received)
	}

	again := w.listen("--forward-to", hook, "--secret", secret, "--since", "10m", "--events", "order.paid")
	testenv.WaitFor(t, 20*time.Second, "the 5 paid events forwarded again", func() bool { return len(again.forwarded(t)) == 5 })
	for id, n := range again.forwarded(t) {
		if all[id] != ticketing.EventOrderPaid || n != 1 {
			t.Errorf("--since --events order.paid forwarded %s (%s) %d times", id, all[id], n)
		}
	}
	for id := range before {
		if !strings.Contains(received.String(), fmt.Sprintf("verified order.paid %s ", id)) {
			t.Errorf("--since did not bring the event %s from before the first start:\n%s", id, received)
		}
	}
	testenv.WaitFor(t, 5*time.Second, "4 duplicates dropped", func() bool {
		return strings.Count(received.String(), "duplicate order.paid") == 4
	})
}

// While the API fails, tixctl listen backs off and says so, then catches up;
// a receiver that keeps failing gets forwardAttempts POSTs and listen moves
// on, saying so; the next event goes through. Human output, Ctrl-C exits 0.
func TestListen_BacksOffAndMovesOnAfterAFailedForward(t *testing.T) {
	t.Parallel()
	w := newListenWorld(t)
	var apiDown, hookDown atomic.Bool
	router := w.a.Server.Handler()
	flaky := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if apiDown.Load() {
			rw.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		router.ServeHTTP(rw, r)
	}))
	t.Cleanup(flaky.Close)
	var posts atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		if hookDown.Load() {
			rw.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(hook.Close)

	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testenv.SyncBuffer
	a := newApp(&stdout, &stderr, nil)
	a.parent = ctx
	code := make(chan int, 1)
	go func() {
		code <- a.run([]string{"listen", "--forward-to", hook.URL, "--api", flaky.URL + "/v1", "--key", w.sk, "--interval", "100ms"})
	}()
	t.Cleanup(cancel)
	testenv.WaitFor(t, 10*time.Second, "ready", func() bool { return strings.Contains(stdout.String(), "Your webhook signing secret is whsec_") })
	apiDown.Store(true)
	hookDown.Store(true)
	w.orders(1, ticketing.OutcomePaid)
	testenv.WaitFor(t, 10*time.Second, "a poll error reported", func() bool {
		return strings.Count(stderr.String(), "reading the event log failed (the event log answered 503); trying again in") >= 2
	})
	apiDown.Store(false)
	testenv.WaitFor(t, 20*time.Second, "the failed forward reported", func() bool {
		return strings.Contains(stdout.String(), "[failed after 3 attempts: HTTP 500; moving on]")
	})
	if n := posts.Load(); n != forwardAttempts {
		t.Errorf("%d POSTs of the failing event, want %d", n, forwardAttempts)
	}
	hookDown.Store(false)
	w.orders(1, ticketing.OutcomeCancelled)
	testenv.WaitFor(t, 20*time.Second, "the next event forwarded", func() bool { return strings.Contains(stdout.String(), "order.cancelled") })
	cancel()
	if c := <-code; c != 0 || !strings.Contains(stdout.String(), "Stopped: 1 events forwarded, 1 failed.") ||
		!regexp.MustCompile(`order\.cancelled\s+ord_\S+\s+evt_\S+\s+\[200\]`).MatchString(stdout.String()) {
		t.Errorf("exit %d, printed:\n%s", c, stdout.String())
	}
}

// Mistakes: usage errors exit 2 before any request; a key the API refuses
// exits 1 and says to check --key.
func TestListen_RefusesBadFlagsAndKeys(t *testing.T) {
	t.Parallel()
	w := newListenWorld(t)
	pk := auth.NewSecret(auth.Publishable, ticketing.EnvTest)
	for _, args := range [][]string{
		{"--api", w.api, "--key", w.sk},
		{"--forward-to", "localhost:9000", "--api", w.api, "--key", w.sk},
		{"--forward-to", "http://127.0.0.1:9/hooks", "--api", w.api, "--key", pk},
		{"--forward-to", "http://127.0.0.1:9/hooks", "--api", w.api, "--key", w.sk, "--events", "order.created"},
		{"--forward-to", "http://127.0.0.1:9/hooks", "--api", w.api, "--key", w.sk, "--since", "yesterday"},
		{"--forward-to", "http://127.0.0.1:9/hooks", "--api", w.api, "--key", w.sk, "--secret", "s3cret"},
	} {
		var out, errOut strings.Builder
		if code := run(append([]string{"listen"}, args...), &out, &errOut); code != 2 {
			t.Errorf("listen %v: exit %d, want 2 (%s)", args, code, errOut.String())
		}
	}
	var out, errOut strings.Builder
	unknown := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	code := run([]string{"listen", "--forward-to", "http://127.0.0.1:9/hooks", "--api", w.api, "--key", unknown}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "the event log answered 401") || !strings.Contains(errOut.String(), "check --key") {
		t.Errorf("an unknown key: exit %d, %s", code, errOut.String())
	}
	errOut.Reset()
	code = run([]string{"listen", "--forward-to", "http://127.0.0.1:9/hooks", "--api", "http://127.0.0.1:9/v1", "--key", w.sk}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "is the API running there?") {
		t.Errorf("no API: exit %d, %s", code, errOut.String())
	}
}
