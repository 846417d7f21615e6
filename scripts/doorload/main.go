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
	"tix/internal/ticketing"
	"tix/scripts/loadstack"
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

func run(n, scanners int) error {
	ctx := context.Background()
	a, drop, err := loadstack.Open(ctx, "doorload", "load-door", map[string]string{
		"TIX_RATE_WRITES": "1000000", "TIX_RATE_READS": "1000000", // the key's budget is not what is measured
	})
	if err != nil {
		return err
	}
	defer drop()
	a.Sales.Deps.Timers = nil
	app.EnableDoor(a) // as functions/checkins does
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
	secret, err := loadstack.Organizer(ctx, a, org, "Door load", auth.KeyRequest{Type: auth.Secret,
		Scopes: []string{auth.ScopeCheckinsWrite}, Events: []string{"evt_doorload"}}, now)
	if err != nil {
		return "", err
	}
	ev := loadstack.Event("evt_doorload", org, "Door load", "Hall", now)
	// Room beyond n: the stock is spread over shards, and the last orders of
	// 10 may find no one shard with 10 left while the tier has them.
	ev.Tiers = []ticketing.Tier{{ID: "tier_doorload", Name: "GA", Price: 150000, Capacity: n + 10*ticketing.MaxStockShards, PersonsIncluded: 1}}
	return secret, a.Store.Catalog.PutEvent(ctx, ev)
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
