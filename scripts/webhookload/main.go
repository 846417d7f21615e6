// Command webhookload measures webhook delivery on the local stack:
//
//  1. latency: from simulate-payment to the receiver getting order.paid
//     (p50, p99), with the deliveries consumers the local runner runs;
//  2. throughput: deliveries per second one deliver function (one consumer:
//     batches of 10 handled concurrently) sustains against a local receiver,
//     and the DynamoDB request units per delivery attempt.
//
// It uses its own table and queues on DynamoDB Local and fauxqs
// (`make load-webhooks` starts them) and a receiver on a loopback port.
//
//	go run ./scripts/webhookload -latency 200 -deliveries 1000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/app"
	"tix/internal/config"
	"tix/internal/queue"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

func main() {
	latency := flag.Int("latency", 200, "orders paid one after another for the latency figure")
	deliveries := flag.Int("deliveries", 1000, "deliveries queued for the throughput figure")
	flag.Parse()
	if err := run(*latency, *deliveries); err != nil {
		fmt.Fprintln(os.Stderr, "webhookload:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// receiver records when each order's order.paid arrived.
type receiver struct {
	mu      sync.Mutex
	arrived map[string]time.Time
	waiting map[string]chan struct{}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var env struct {
		Type string `json:"type"`
		Data struct {
			Nonce string `json:"nonce"`
			Order struct {
				ID string `json:"id"`
			} `json:"order"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &env)
	if env.Type == webhook.TypeEndpointVerify {
		_ = json.NewEncoder(w).Encode(map[string]string{"nonce": env.Data.Nonce})
		return
	}
	now := time.Now()
	rc.mu.Lock()
	if _, dup := rc.arrived[env.Data.Order.ID]; !dup {
		rc.arrived[env.Data.Order.ID] = now
		if ch := rc.waiting[env.Data.Order.ID]; ch != nil {
			close(ch)
		}
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) wait(id string) chan struct{} {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	ch := make(chan struct{})
	if _, ok := rc.arrived[id]; ok {
		close(ch)
	} else {
		rc.waiting[id] = ch
	}
	return ch
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.arrived)
}

func run(latencyN, throughputN int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	suffix := time.Now().UnixNano()
	table := fmt.Sprintf("tix-whload-%d", suffix)
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "TIX_TABLE":
			return table
		case "TIX_QUEUE_PREFIX":
			return fmt.Sprintf("tix-whload-%d", suffix)
		case "TIX_DYNAMODB_ENDPOINT":
			return envOr("TIX_DYNAMODB_ENDPOINT", "http://127.0.0.1:8000")
		case "TIX_SQS_ENDPOINT":
			return envOr("TIX_SQS_ENDPOINT", "http://127.0.0.1:4566")
		case "TIX_CURSOR_SECRET":
			return "webhook-load-cursor-secret"
		case "TIX_WEBHOOK_KEYRING":
			return config.LocalKeyring
		case "TIX_LOG_LEVEL":
			return "error"
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
	a.Sales.Timers = nil                       // order expiry is not measured here
	app.AllowLoopbackWebhooks(a.Webhooks, cfg) // the receiver is on this machine
	fmt.Printf("==> Creating table %s and queues\n", table)
	if _, err := a.Store.EnsureTable(ctx); err != nil {
		return fmt.Errorf("%w (is DynamoDB Local running? `make load-webhooks` starts it)", err)
	}
	defer func() { _ = a.Store.DeleteTable(context.Background()) }()
	if _, err := a.Queue.EnsureQueues(ctx); err != nil {
		return fmt.Errorf("%w (is fauxqs running? `make load-webhooks` starts it)", err)
	}
	now := time.Now().UTC()
	if err := a.Store.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_whload", Name: "Webhook load", CreatedAt: now}); err != nil {
		return err
	}
	capacity := latencyN + throughputN + 10
	ev := &ticketing.Event{ID: "evt_whload", OrganizerID: "org_whload", Ref: "whload", Status: ticketing.EventPublished,
		Kind: ticketing.KindSingle, Title: "Webhook load", City: "Moscow", Venue: "Hall", StartsAt: now.Add(720 * time.Hour),
		EndsAt: now.Add(723 * time.Hour), Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{{ID: "tier_whload", Name: "GA", Price: 150000, Capacity: capacity, PersonsIncluded: 1}}}
	if err := a.Store.PutEvent(ctx, ev); err != nil {
		return err
	}

	rc := &receiver{arrived: map[string]time.Time{}, waiting: map[string]chan struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rc}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	ep, _, err := a.Webhooks.CreateEndpoint(ctx, webhook.NewEndpoint{OrganizerID: "org_whload", Environment: ticketing.EnvTest,
		URL: "http://" + ln.Addr().String() + "/hooks"})
	if err != nil {
		return err
	}
	if _, res, err := a.Webhooks.VerifyEndpoint(ctx, ep.ID); err != nil || !res.OK {
		return fmt.Errorf("verify the receiver: %+v %v", res, err)
	}
	tenant := ticketing.Tenant{OrganizerID: "org_whload", Environment: ticketing.EnvTest}
	order := func(i int) (*ticketing.Order, error) {
		tier, qty, email := "tier_whload", 1, "load@example.com"
		res, err := a.Sales.CreateOrder(ctx, ticketing.Caller{Tenant: tenant, KeyID: "key_whload"}, fmt.Sprintf("whload-%d", i),
			ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty})
		if err != nil {
			return nil, err
		}
		return res.Order, nil
	}
	// consumers runs n deliveries-queue consumers, as the local runner does (4)
	// or as one deliver function does (1), until stop is called.
	consumers := func(n int) (stop func()) {
		cctx, ccancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				_ = a.Queue.Consume(cctx, queue.DeliveriesQueue, func(ctx context.Context, m queue.Message) error {
					return a.HandleDeliveryMessage(ctx, m.Body)
				})
			})
		}
		return func() { ccancel(); wg.Wait() }
	}

	// 1. Latency.
	fmt.Printf("==> Latency: %d orders paid one after another; time from simulate-payment to order.paid at the receiver\n", latencyN)
	stop := consumers(4)
	var lat []time.Duration
	for i := range latencyN {
		o, err := order(i)
		if err != nil {
			return err
		}
		ch := rc.wait(o.ID)
		start := time.Now()
		if _, err := a.Sales.Simulate(ctx, tenant, o.ID, ticketing.OutcomePaid); err != nil {
			return err
		}
		select {
		case <-ch:
			lat = append(lat, time.Since(start))
		case <-time.After(30 * time.Second):
			return fmt.Errorf("order.paid of %s did not arrive within 30 s", o.ID)
		}
	}
	stop()
	// A long poll cut short by stop stays registered in fauxqs until its wait
	// (2 s) ends and would take a message into the void: let it expire.
	time.Sleep(2500 * time.Millisecond)
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[int(float64(len(lat)-1)*p)] }
	fmt.Printf("    p50 %.0f ms, p99 %.0f ms, max %.0f ms\n", ms(pct(0.5)), ms(pct(0.99)), ms(lat[len(lat)-1]))

	// 2. Throughput of one deliver function, and request units per attempt.
	fmt.Printf("==> Throughput: %d paid orders queued (fan-out messages), then one consumer (one deliver function: batches of 10 at once)\n", throughputN)
	a.Webhooks.Settings.DomainRate, a.Webhooks.Settings.GlobalRate = 1<<30, 1<<30 // measure the function, not the limits
	for i := range throughputN {
		o, err := order(latencyN + i)
		if err != nil {
			return err
		}
		if _, err := a.Sales.Simulate(ctx, tenant, o.ID, ticketing.OutcomePaid); err != nil {
			return err
		}
	}
	var mu sync.Mutex
	units := map[string]float64{} // op -> capacity units
	requests := map[string]int{}
	a.Store.OnCapacity(func(op string, c *types.ConsumedCapacity) {
		mu.Lock()
		defer mu.Unlock()
		requests[op]++
		if c != nil && c.CapacityUnits != nil {
			units[op] += *c.CapacityUnits
		}
	})
	base := rc.count()
	start := time.Now()
	stop = consumers(1)
	for rc.count()-base < throughputN {
		if time.Since(start) > 5*time.Minute {
			stop()
			return fmt.Errorf("only %d of %d deliveries arrived in 5 minutes", rc.count()-base, throughputN)
		}
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	stop()
	fmt.Printf("    %d deliveries (fan-out + attempt each) in %.1fs: %.0f deliveries/s\n", throughputN, elapsed.Seconds(), float64(throughputN)/elapsed.Seconds())
	mu.Lock()
	defer mu.Unlock()
	ops := make([]string, 0, len(requests))
	for op := range requests {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	n := float64(throughputN)
	var reads, writes float64
	fmt.Printf("    %-20s %-6s %12s %14s\n", "operation", "kind", "requests", "units/delivery")
	for _, op := range ops {
		kind := "write"
		if strings.HasPrefix(op, "Get") || strings.HasPrefix(op, "Load") || strings.HasPrefix(op, "List") {
			kind, reads = "read", reads+units[op]
		} else {
			writes += units[op]
		}
		fmt.Printf("    %-20s %-6s %12d %14.2f\n", op, kind, requests[op], units[op]/n)
	}
	fmt.Printf("    per delivery (fan-out + one attempt): %.2f RCU, %.2f WCU; requests %.1f\n", reads/n, writes/n, float64(total(requests))/n)
	fmt.Println("    (DynamoDB Local's figures; AWS charges transactional writes (Dispatch) twice)")
	return nil
}

func total(m map[string]int) int {
	t := 0
	for _, v := range m {
		t += v
	}
	return t
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
