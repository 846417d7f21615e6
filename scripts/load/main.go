// Command load measures POST /orders on the local stack: latency (p50, p99)
// and orders per second at each client count, then checks that nothing was
// oversold. It runs the real router and middleware over HTTP on a loopback
// port against DynamoDB Local, with its own organizer, key and one event per
// client count in a fresh table (`make load` starts the emulators). Per-key
// rate limits are lifted: this measures the sales path, not the budget. At
// each client count it also runs the floor (floor.go) on the same emulator
// and prints tix's orders/s as a share of it.
//
//	go run ./scripts/load -orders 600 -clients 1,4,16,32 -capacity 400
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tix/internal/api"
	"tix/internal/app"
	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/ticketing"
	"tix/scripts/loadstack"
)

func main() {
	orders := flag.Int("orders", 2000, "orders to attempt")
	conc := flag.Int("concurrency", 0, "parallel clients (one client count; -clients lists several)")
	clients := flag.String("clients", "1,4,16,32", "client counts to measure, comma-separated")
	repeat := flag.Int("repeat", 2, "runs of tix and of the floor at each client count, alternating; the best of each is quoted")
	capacity := flag.Int("capacity", 1500, "tickets in the tier (fewer than orders shows the oversell check)")
	qty := flag.Int("quantity", 1, "tickets per order")
	endpoint := flag.String("dynamodb", loadstack.EnvOr("TIX_DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"), "DynamoDB endpoint")
	flag.Parse()
	levels, err := parseClients(*clients, *conc)
	if err == nil {
		err = run(*orders, levels, max(*repeat, 1), *capacity, *qty, *endpoint)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func parseClients(list string, conc int) ([]int, error) {
	if conc > 0 {
		return []int{conc}, nil
	}
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-clients %q: want positive integers separated by commas", list)
		}
		out = append(out, n)
	}
	return out, nil
}

// level is what one client count measured.
type level struct {
	clients  int
	tix      *results
	elapsed  time.Duration
	created  int
	floor    floorResult
	p50, p99 time.Duration
}

func run(orders int, levels []int, repeat, capacity, qty int, endpoint string) error {
	ctx := context.Background()
	a, err := newApp(ctx, endpoint)
	if err != nil {
		return err
	}
	fmt.Printf("==> Creating table %s on %s\n", a.Config.Table, endpoint)
	if _, err := a.Store.EnsureTable(ctx); err != nil {
		return fmt.Errorf("%w (is DynamoDB Local running? `make load` starts it)", err)
	}
	defer func() { _ = a.Store.DeleteTable(context.Background()) }()
	secret, err := seed(ctx, a)
	if err != nil {
		return err
	}
	a.Server.Limits = api.Limits{ReadsPerWindow: 1 << 30, WritesPerWindow: 1 << 30, Window: time.Minute, MaxBodyBytes: 64 << 10}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: a.Server.Handler()}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	var done []level
	for _, conc := range levels {
		var best level
		for r := range repeat {
			l, err := measure(ctx, a, "http://"+ln.Addr().String()+"/v1/orders", secret, fmt.Sprintf("%d_%d", conc, r), orders, conc, qty, capacity)
			if err != nil {
				return err
			}
			best = better(best, l)
		}
		done = append(done, best)
	}
	printSummary(done)
	return nil
}

// better keeps the faster tix run (with its latencies) and the faster floor
// run of two measurements: on a shared machine the best run is the one least
// disturbed by other work.
func better(a, b level) level {
	if a.tix == nil {
		return b
	}
	out := a
	if float64(b.created)/b.elapsed.Seconds() > float64(a.created)/a.elapsed.Seconds() {
		out.tix, out.elapsed, out.created, out.p50, out.p99 = b.tix, b.elapsed, b.created, b.p50, b.p99
	}
	if b.floor.perSecond() > a.floor.perSecond() {
		out.floor = b.floor
	}
	return out
}

// measure runs tix and then the floor at one client count.
func measure(ctx context.Context, a *app.App, url, secret, run string, orders, conc, qty, capacity int) (level, error) {
	eventID, tierID := "evt_load_"+run, "tier_load_"+run
	if err := seedEvent(ctx, a, eventID, tierID, capacity); err != nil {
		return level{}, err
	}
	fmt.Printf("==> %d orders of %d ticket(s), %d clients, tier capacity %d (%d stock shards)\n",
		orders, qty, conc, capacity, ticketing.StockShards(capacity))
	l := level{clients: conc, tix: &results{codes: map[int]int{}}}
	start := time.Now()
	l.tix.post(url, secret, eventID, tierID, orders, conc, qty)
	l.elapsed = time.Since(start)
	l.created, l.p50, l.p99 = l.tix.report(l.elapsed)
	if err := checkOversell(ctx, a, eventID, tierID, l.created, qty, capacity, l.tix.codes); err != nil {
		return l, err
	}
	f, err := runFloor(ctx, a.Store.Client(), a.Store.TableName(), run, orders, conc, qty, capacity)
	if err != nil {
		return l, err
	}
	l.floor = f
	fmt.Printf("    floor: %d orders created, %.0f orders/s over %.1fs\n", f.created, f.perSecond(), f.elapsed.Seconds())
	return l, nil
}

// printSummary prints tix's orders/s against the floor's at each client count.
func printSummary(levels []level) {
	fmt.Println("==> Orders created per second: tix (POST /orders over HTTP) vs the floor (one bare transaction per order)")
	fmt.Printf("    %7s  %9s  %9s  %9s  %11s  %6s\n", "clients", "p50 ms", "p99 ms", "tix/s", "floor/s", "ratio")
	for _, l := range levels {
		tix := float64(l.created) / l.elapsed.Seconds()
		fmt.Printf("    %7d  %9.1f  %9.1f  %9.0f  %11.0f  %5.0f%%\n", l.clients, ms(l.p50), ms(l.p99), tix, l.floor.perSecond(), 100*tix/l.floor.perSecond())
	}
}

// newApp wires the service over a table of its own on endpoint.
func newApp(ctx context.Context, endpoint string) (*app.App, error) {
	table := fmt.Sprintf("tix-load-%d", time.Now().UnixNano())
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "TIX_TABLE":
			return table
		case "TIX_DYNAMODB_ENDPOINT":
			return endpoint
		case "TIX_CURSOR_SECRET":
			return "load-test-cursor-secret"
		case "TIX_SQS_ENDPOINT":
			return loadstack.EnvOr("TIX_SQS_ENDPOINT", "http://127.0.0.1:4566")
		case "TIX_LOG_LEVEL":
			return "error"
		case "TIX_WEBHOOK_KEYRING":
			return config.LocalKeyring
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	app.Logger(cfg)
	a, err := app.New(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	a.Sales.Deps.Timers = nil // expiry is not measured here
	return a, nil
}

// seed writes the organizer and a test secret key (returned).
func seed(ctx context.Context, a *app.App) (string, error) {
	now := time.Now().UTC()
	if err := a.Store.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_load", Name: "Load", CreatedAt: now}); err != nil {
		return "", err
	}
	secret := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	if err := a.Store.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_load", Type: auth.Secret,
		Environment: ticketing.EnvTest, Scopes: auth.AllScopes, CreatedAt: now}, auth.Hash(secret)); err != nil {
		return "", err
	}
	return secret, nil
}

// seedEvent writes a published event with one general-admission tier.
func seedEvent(ctx context.Context, a *app.App, eventID, tierID string, capacity int) error {
	now := time.Now().UTC()
	ev := &ticketing.Event{ID: eventID, OrganizerID: "org_load", Ref: eventID, Status: ticketing.EventPublished,
		Kind: ticketing.KindSingle, Title: "Load", City: "Moscow", Venue: "Hall", StartsAt: now.Add(720 * time.Hour),
		EndsAt: now.Add(723 * time.Hour), Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{{ID: tierID, Name: "GA", Price: 150000, Capacity: capacity, PersonsIncluded: 1}}}
	return a.Store.Catalog.PutEvent(ctx, ev)
}

// results are the latencies and status codes (0: transport error) of the orders.
type results struct {
	mu    sync.Mutex
	lat   []time.Duration
	codes map[int]int
}

// post sends orders POST /orders of qty tickets from conc clients at once.
func (r *results) post(url, secret, eventID, tierID string, orders, conc, qty int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	body := fmt.Sprintf(`{"tier_id":%q,"event_id":%q,"quantity":%d,"buyer":{"email":"load@example.com"}}`, tierID, eventID, qty)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(orders) {
					return
				}
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
				req.Header.Set("Authorization", "Bearer "+secret)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", fmt.Sprintf("load-%s-%d", eventID, i))
				t := time.Now()
				res, err := client.Do(req)
				d := time.Since(t)
				code := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, res.Body)
					_ = res.Body.Close()
					code = res.StatusCode
				}
				r.mu.Lock()
				r.lat = append(r.lat, d)
				r.codes[code]++
				r.mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// report prints the responses, latency and throughput over elapsed, and
// returns how many orders were created and the p50 and p99 latencies.
func (r *results) report(elapsed time.Duration) (int, time.Duration, time.Duration) {
	slices.Sort(r.lat)
	pct := func(p float64) time.Duration { return r.lat[int(float64(len(r.lat)-1)*p)] }
	created := r.codes[http.StatusCreated]
	fmt.Printf("    responses: %v\n", r.codes)
	fmt.Printf("    latency p50 %.1f ms, p99 %.1f ms\n", ms(pct(0.50)), ms(pct(0.99)))
	fmt.Printf("    throughput %.0f requests/s, %.0f orders created/s over %.1fs\n",
		float64(len(r.lat))/elapsed.Seconds(), float64(created)/elapsed.Seconds(), elapsed.Seconds())
	return created, pct(0.50), pct(0.99)
}

// checkOversell compares the sold counter with the orders created and the
// capacity, and fails on transport or internal errors.
func checkOversell(ctx context.Context, a *app.App, eventID, tierID string, created, qty, capacity int, codes map[int]int) error {
	st, err := a.Store.Catalog.GetStock(ctx, eventID, ticketing.EnvTest, "")
	if err != nil {
		return err
	}
	sold := st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: tierID}]
	fmt.Printf("==> Oversell check: %d orders created x %d = %d tickets; sold counter %d; capacity %d\n", created, qty, created*qty, sold, capacity)
	if sold != created*qty || sold > capacity {
		return fmt.Errorf("OVERSOLD or miscounted: sold %d, created %d x %d, capacity %d", sold, created, qty, capacity)
	}
	if codes[0] > 0 || codes[http.StatusInternalServerError] > 0 {
		return fmt.Errorf("%d transport errors and %d internal errors", codes[0], codes[http.StatusInternalServerError])
	}
	fmt.Println("    ok: nothing oversold")
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
