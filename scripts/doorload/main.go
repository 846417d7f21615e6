// Command doorload measures check-ins on the local stack: SCANNERS concurrent
// scanners POST /v1/check-ins, each with signed codes of distinct tickets,
// through the real router and middleware of the checkins function over
// DynamoDB Local. It prints check-ins per second, p50/p99 latency, and the
// DynamoDB requests a check-in made, then scans every code again
// (already_admitted) and checks that each ticket was admitted exactly once.
//
//	go run ./scripts/doorload -tickets 3000 -scanners 64
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/api"
	"tix/internal/app"
	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/ticketing"
)

const org = "org_doorload"

var tenant = ticketing.Tenant{OrganizerID: org, Environment: ticketing.EnvTest}

func main() {
	tickets := flag.Int("tickets", 3000, "tickets sold, then each scanned once (and once more)")
	scanners := flag.Int("scanners", 64, "concurrent scanners")
	flag.Parse()
	if err := run(*tickets, *scanners); err != nil {
		fmt.Fprintln(os.Stderr, "doorload:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(n, scanners int) error {
	ctx := context.Background()
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "TIX_TABLE":
			return fmt.Sprintf("tix-doorload-%d", time.Now().UnixNano())
		case "TIX_DYNAMODB_ENDPOINT":
			return envOr("TIX_DYNAMODB_ENDPOINT", "http://127.0.0.1:8000")
		case "TIX_SQS_ENDPOINT":
			return envOr("TIX_SQS_ENDPOINT", "http://127.0.0.1:4566")
		case "TIX_CURSOR_SECRET":
			return "door-load-cursor-secret"
		case "TIX_WEBHOOK_KEYRING":
			return config.LocalKeyring
		case "TIX_LOG_LEVEL":
			return "error"
		case "TIX_RATE_WRITES", "TIX_RATE_READS":
			return "1000000" // the key's budget is not what is measured
		}
		return ""
	})
	if err != nil {
		return err
	}
	app.Logger(cfg)
	a, err := app.New(ctx, cfg, nil)
	if err != nil {
		return err
	}
	a.Sales.Deps.Timers = nil
	app.EnableDoor(a) // as functions/checkins does
	fmt.Printf("==> Creating table %s\n", cfg.Table)
	if _, err := a.Store.EnsureTable(ctx); err != nil {
		return fmt.Errorf("%w (is DynamoDB Local running? `make load-door` starts it)", err)
	}
	defer func() { _ = a.Store.DeleteTable(context.Background()) }()
	secret, err := seed(ctx, a, n)
	if err != nil {
		return err
	}
	fmt.Printf("==> Selling %d tickets\n", n)
	codes, err := sell(ctx, a, n)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(a.Server.Handler(api.GroupCheckins))
	defer srv.Close()
	var ops sync.Map
	a.Store.OnCapacity(func(op string, _ *types.ConsumedCapacity) {
		c, _ := ops.LoadOrStore(op, new(atomic.Int64))
		c.(*atomic.Int64).Add(1)
	})
	first, err := scanAll(srv.URL, secret, codes, scanners)
	if err != nil {
		return err
	}
	report("first scans", first, n)
	ops.Range(func(k, v any) bool {
		fmt.Printf("    DynamoDB %-16s %d (%.2f per check-in)\n", k, v.(*atomic.Int64).Load(), float64(v.(*atomic.Int64).Load())/float64(n))
		return true
	})
	second, err := scanAll(srv.URL, secret, codes, scanners)
	if err != nil {
		return err
	}
	report("second scans", second, n)
	if first.results["admitted"] != n || second.results["already_admitted"] != n {
		return fmt.Errorf("first scans %v, second %v: want every ticket admitted exactly once", first.results, second.results)
	}
	return nil
}

// seed writes the organizer, an event of n places and a door key.
func seed(ctx context.Context, a *app.App, n int) (string, error) {
	now := time.Now().UTC()
	if err := a.Store.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: org, Name: "Door load", CreatedAt: now}); err != nil {
		return "", err
	}
	ev := &ticketing.Event{ID: "evt_doorload", OrganizerID: org, Ref: "doorload", Status: ticketing.EventPublished,
		Kind: ticketing.KindSingle, Title: "Door load", City: "Moscow", Venue: "Hall", StartsAt: now.Add(720 * time.Hour),
		EndsAt: now.Add(723 * time.Hour), Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		// Room beyond n: the stock is spread over shards, and the last orders of
		// 10 may find no one shard with 10 left while the tier has them.
		Tiers: []ticketing.Tier{{ID: "tier_doorload", Name: "GA", Price: 150000, Capacity: n + 10*ticketing.MaxStockShards, PersonsIncluded: 1}}}
	if err := a.Store.Catalog.PutEvent(ctx, ev); err != nil {
		return "", err
	}
	k, secret, hash, err := auth.NewKey(auth.KeyRequest{OrganizerID: org, Type: auth.Secret, Environment: ticketing.EnvTest,
		Scopes: []string{auth.ScopeCheckinsWrite}, Events: []string{"evt_doorload"}}, now)
	if err != nil {
		return "", err
	}
	return secret, a.Store.Keys.CreateKey(ctx, k, hash)
}

// sell pays orders of up to 10 tickets until n are sold and returns each
// ticket's signed code.
func sell(ctx context.Context, a *app.App, n int) ([]string, error) {
	var mu sync.Mutex
	var codes []string
	var firstErr error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := 0; i*10 < n; i++ {
		qty := min(10, n-i*10)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, err := sellOne(ctx, a, fmt.Sprintf("doorload-%d", i), qty)
			mu.Lock()
			defer mu.Unlock()
			codes = append(codes, c...)
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	return codes, firstErr
}

func sellOne(ctx context.Context, a *app.App, key string, qty int) ([]string, error) {
	email, tier := "door@example.com", "tier_doorload"
	res, err := a.Sales.Orders.CreateOrder(ctx, ticketing.Caller{Tenant: tenant, KeyID: "key_doorload"}, key,
		ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty})
	if err != nil {
		return nil, err
	}
	o, err := a.Sales.Orders.Simulate(ctx, tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil {
		return nil, err
	}
	_, byNumber, err := a.TicketKeys.TicketCodes(ctx, o)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range o.Tickets {
		out = append(out, byNumber[t.Number])
	}
	return out, nil
}

type pass struct {
	took      time.Duration
	latencies []time.Duration
	results   map[string]int
}

// scanAll posts every code once, from scanners concurrent clients.
func scanAll(base, secret string, codes []string, scanners int) (*pass, error) {
	p := &pass{results: map[string]int{}}
	var mu sync.Mutex
	var next atomic.Int64
	var firstErr error
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: scanners}}
	var wg sync.WaitGroup
	start := time.Now()
	for s := range scanners {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(codes) {
					return
				}
				body, _ := json.Marshal(map[string]string{"code": codes[i], "gate": fmt.Sprintf("gate-%d", s%8)})
				req, _ := http.NewRequest(http.MethodPost, base+"/v1/check-ins", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+secret)
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := client.Do(req)
				var out struct {
					Result string `json:"result"`
				}
				if err == nil {
					err = json.NewDecoder(resp.Body).Decode(&out)
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				d := time.Since(t0)
				mu.Lock()
				p.latencies = append(p.latencies, d)
				p.results[out.Result]++
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	p.took = time.Since(start)
	return p, firstErr
}

func report(label string, p *pass, n int) {
	slices.Sort(p.latencies)
	q := func(f float64) time.Duration { return p.latencies[int(f*float64(len(p.latencies)-1))] }
	fmt.Printf("==> %s: %d check-ins in %.2fs: %.0f check-ins/s, p50 %.1f ms, p99 %.1f ms, results %v\n", label, n,
		p.took.Seconds(), float64(n)/p.took.Seconds(), float64(q(0.5).Microseconds())/1000, float64(q(0.99).Microseconds())/1000, p.results)
}
