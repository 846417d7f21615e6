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
//
// TIX_WEBHOOK_* settings (docs/configuration.md) apply, e.g.
// TIX_WEBHOOK_DOMAIN_RATE=10 for sequential payments faster than the
// receiving host's outbound limit.
package main

import (
	"context"
	"flag"
	"fmt"
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
	"tix/internal/app/sending"
	"tix/internal/config"
	"tix/internal/queue"
	"tix/internal/ticketing"
	"tix/internal/webhook"
	"tix/internal/webhook/webhooktest"
	"tix/scripts/loadstack"
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

// receiver records when each order's order.paid arrived.
type receiver struct {
	mu      sync.Mutex
	arrived map[string]time.Time
	waiting map[string]chan struct{}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var env webhooktest.Envelope
	if _, ok := webhooktest.Receive(w, r, &env); !ok {
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
	a, err := newApp(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("==> Creating table %s and queues\n", a.Config.Table)
	if _, err := a.Store.EnsureTable(ctx); err != nil {
		return fmt.Errorf("%w (is DynamoDB Local running? `make load-webhooks` starts it)", err)
	}
	defer func() { _ = a.Store.DeleteTable(context.Background()) }()
	if _, err := a.Queue.EnsureQueues(ctx); err != nil {
		return fmt.Errorf("%w (is fauxqs running? `make load-webhooks` starts it)", err)
	}
	if err := seed(ctx, a, latencyN+throughputN+10); err != nil {
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
	if err := registerReceiver(ctx, a, "http://"+ln.Addr().String()+"/hooks"); err != nil {
		return err
	}
	b := &bench{ctx: ctx, a: a, rc: rc, tenant: ticketing.Tenant{OrganizerID: "org_whload", Environment: ticketing.EnvTest}}
	if err := b.latency(latencyN); err != nil {
		return err
	}
	return b.throughput(latencyN, throughputN)
}

// newApp wires the service over a table and queues of its own.
func newApp(ctx context.Context) (*app.App, error) {
	suffix := time.Now().UnixNano()
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "TIX_TABLE":
			return fmt.Sprintf("tix-whload-%d", suffix)
		case "TIX_QUEUE_PREFIX":
			return fmt.Sprintf("tix-whload-%d", suffix)
		case "TIX_DYNAMODB_ENDPOINT":
			return loadstack.EnvOr("TIX_DYNAMODB_ENDPOINT", "http://127.0.0.1:8000")
		case "TIX_SQS_ENDPOINT":
			return loadstack.EnvOr("TIX_SQS_ENDPOINT", "http://127.0.0.1:4566")
		case "TIX_CURSOR_SECRET":
			return "webhook-load-cursor-secret"
		case "TIX_WEBHOOK_KEYRING":
			return config.LocalKeyring
		case "TIX_LOG_LEVEL":
			return "error"
		}
		if strings.HasPrefix(k, "TIX_WEBHOOK_") {
			return os.Getenv(k) // e.g. TIX_WEBHOOK_DOMAIN_RATE: the receiver's outbound limit
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	app.Logger(cfg)
	a, err := sending.New(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	a.Sales.Deps.Timers = nil                  // order expiry is not measured here
	app.AllowLoopbackWebhooks(a.Webhooks, cfg) // the receiver is on this machine
	return a, nil
}

// seed writes the organizer and a published event with capacity tickets.
func seed(ctx context.Context, a *app.App, capacity int) error {
	now := time.Now().UTC()
	if err := a.Store.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_whload", Name: "Webhook load", CreatedAt: now}); err != nil {
		return err
	}
	ev := &ticketing.Event{ID: "evt_whload", OrganizerID: "org_whload", Ref: "whload", Status: ticketing.EventPublished,
		Kind: ticketing.KindSingle, Title: "Webhook load", City: "Moscow", Venue: "Hall", StartsAt: now.Add(720 * time.Hour),
		EndsAt: now.Add(723 * time.Hour), Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{{ID: "tier_whload", Name: "GA", Price: 150000, Capacity: capacity, PersonsIncluded: 1}}}
	return a.Store.Catalog.PutEvent(ctx, ev)
}

// registerReceiver creates the test endpoint at url and verifies it.
func registerReceiver(ctx context.Context, a *app.App, url string) error {
	ep, _, err := a.Webhooks.CreateEndpoint(ctx, webhook.NewEndpoint{OrganizerID: "org_whload", Environment: ticketing.EnvTest, URL: url})
	if err != nil {
		return err
	}
	if _, res, err := a.Webhooks.VerifyEndpoint(ctx, ep.ID); err != nil || !res.OK {
		return fmt.Errorf("verify the receiver: %+v %v", res, err)
	}
	return nil
}

// bench is the wired service, the receiver and the tenant the measures use.
type bench struct {
	ctx    context.Context
	a      *app.App
	rc     *receiver
	tenant ticketing.Tenant
}

// order creates the i-th pending test order of one ticket.
func (b *bench) order(i int) (*ticketing.Order, error) {
	tier, qty, email := "tier_whload", 1, "load@example.com"
	res, err := b.a.Sales.Orders.CreateOrder(b.ctx, ticketing.Caller{Tenant: b.tenant, KeyID: "key_whload"}, fmt.Sprintf("whload-%d", i),
		ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty})
	if err != nil {
		return nil, err
	}
	return res.Order, nil
}

// consumers runs n deliveries-queue consumers, as the local runner does (4)
// or as one deliver function does (1), until stop is called.
func (b *bench) consumers(n int) (stop func()) {
	cctx, ccancel := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_ = b.a.Queue.Consume(cctx, queue.DeliveriesQueue, func(ctx context.Context, m queue.Message) error {
				return b.a.HandleDeliveryMessage(ctx, m.Body)
			})
		})
	}
	return func() { ccancel(); wg.Wait() }
}

// latency pays n orders one after another and prints the time from
// simulate-payment to order.paid at the receiver.
func (b *bench) latency(n int) error {
	fmt.Printf("==> Latency: %d orders paid one after another; time from simulate-payment to order.paid at the receiver\n", n)
	stop := b.consumers(4)
	var lat []time.Duration
	for i := range n {
		o, err := b.order(i)
		if err != nil {
			return err
		}
		ch := b.rc.wait(o.ID)
		start := time.Now()
		if _, err := b.a.Sales.Orders.Simulate(b.ctx, b.tenant, o.ID, ticketing.OutcomePaid); err != nil {
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
	return nil
}

// throughput queues n paid orders (orders numbered from first), then lets
// one consumer deliver them, and prints deliveries per second and the
// request units per delivery.
func (b *bench) throughput(first, n int) error {
	fmt.Printf("==> Throughput: %d paid orders queued (fan-out messages), then one consumer (one deliver function: batches of 10 at once)\n", n)
	b.a.Webhooks.Settings.DomainRate, b.a.Webhooks.Settings.GlobalRate = 1<<30, 1<<30 // measure the function, not the limits
	for i := range n {
		o, err := b.order(first + i)
		if err != nil {
			return err
		}
		if _, err := b.a.Sales.Orders.Simulate(b.ctx, b.tenant, o.ID, ticketing.OutcomePaid); err != nil {
			return err
		}
	}
	m := &meter{units: map[string]float64{}, requests: map[string]int{}}
	b.a.Store.OnCapacity(m.record)
	base := b.rc.count()
	start := time.Now()
	stop := b.consumers(1)
	for b.rc.count()-base < n {
		if time.Since(start) > 5*time.Minute {
			stop()
			return fmt.Errorf("only %d of %d deliveries arrived in 5 minutes", b.rc.count()-base, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	stop()
	fmt.Printf("    %d deliveries (fan-out + attempt each) in %.1fs: %.0f deliveries/s\n", n, elapsed.Seconds(), float64(n)/elapsed.Seconds())
	m.print(n)
	return nil
}

// meter counts the store's requests and capacity units by operation.
type meter struct {
	mu       sync.Mutex
	units    map[string]float64 // op -> capacity units
	requests map[string]int
}

func (m *meter) record(op string, c *types.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[op]++
	if c != nil && c.CapacityUnits != nil {
		m.units[op] += *c.CapacityUnits
	}
}

// print writes the requests and units per delivery of each operation, and the totals.
func (m *meter) print(deliveries int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ops := make([]string, 0, len(m.requests))
	for op := range m.requests {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	n := float64(deliveries)
	var reads, writes float64
	fmt.Printf("    %-20s %-6s %12s %14s\n", "operation", "kind", "requests", "units/delivery")
	for _, op := range ops {
		kind := "write"
		if strings.HasPrefix(op, "Get") || strings.HasPrefix(op, "Load") || strings.HasPrefix(op, "List") {
			kind, reads = "read", reads+m.units[op]
		} else {
			writes += m.units[op]
		}
		fmt.Printf("    %-20s %-6s %12d %14.2f\n", op, kind, m.requests[op], m.units[op]/n)
	}
	fmt.Printf("    per delivery (fan-out + one attempt): %.2f RCU, %.2f WCU; requests %.1f\n", reads/n, writes/n, float64(total(m.requests))/n)
	fmt.Println("    (DynamoDB Local's figures; AWS charges transactional writes (Dispatch) twice)")
}

func total(m map[string]int) int {
	t := 0
	for _, v := range m {
		t += v
	}
	return t
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
