package store_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The on-sale proof: 400 clients buy 1 or 2 tickets at a time from a tier of
// 1,000 over 16 shards until it is sold out; exactly 1,000 are sold, none
// stranded, no shard below 0 or over its cap. With churn, clients also let
// orders expire and refund paid ones while the others buy.
func TestShardedTierSellsOutUnderConcurrency(t *testing.T) {
	for _, churn := range []bool{false, true} {
		name := "Buyers"
		if churn {
			name = "BuyersWithExpiriesAndRefunds"
		}
		t.Run(name, func(t *testing.T) { runShardRace(t, churn) })
	}
}

const (
	raceClients  = 400
	raceCapacity = 1000
	raceTier     = "tier_race"
	raceEvent    = "evt_race"
)

type shardRace struct {
	r     *lateRace
	e     *ticketing.Event
	live  atomic.Int64 // units of orders still pending or paid
	churn bool
	mu    sync.Mutex
	done  bool // the stock read showed the tier sold out
}

// soldOut reads the stock, one client at a time, once a 1-ticket order was
// refused: when the tier is sold out every client stops.
func (sr *shardRace) soldOut(ctx context.Context) bool {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if !sr.done {
		st, err := sr.r.st.Catalog.GetStock(ctx, raceEvent, ticketing.EnvTest, "")
		sr.done = err == nil && st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: raceTier}] >= raceCapacity
	}
	return sr.done
}

func runShardRace(t *testing.T, churn bool) {
	r := newLateRace(t)
	ev := ticketingtest.Event(r.now)
	ev.ID, ev.Ref, ev.HasSeating, ev.Seating, ev.Zones, ev.Promos = raceEvent, "race", false, nil, nil, nil
	ev.Tiers = []ticketing.Tier{{ID: raceTier, Name: "GA", Price: 100000, Capacity: raceCapacity, PersonsIncluded: 1}}
	ctx := context.Background()
	if err := r.st.Catalog.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if n := ticketing.StockShards(raceCapacity); n != 16 {
		t.Fatalf("a tier of %d has %d shards, want 16", raceCapacity, n)
	}
	sr := &shardRace{r: r, e: ev, churn: churn}
	var mu sync.Mutex
	ops := map[string]int{}
	r.st.OnCapacity(func(op string, _ *types.ConsumedCapacity) { mu.Lock(); ops[op]++; mu.Unlock() })
	defer func() { t.Logf("ops %v", ops) }()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, raceClients)
	for range raceClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sr.client(ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d clients sold %d units in %s", raceClients, sr.live.Load(), time.Since(start))
	sold := sr.check(t, "after the clients")
	if sold != int(sr.live.Load()) {
		t.Fatalf("stock says %d sold, the orders hold %d", sold, sr.live.Load())
	}
	if !churn && sold != raceCapacity {
		t.Fatalf("sold %d of %d: stock stranded while buyers were refused", sold, raceCapacity)
	}
	// Stock given back after the last buyer stopped is sold one by one.
	for sold < raceCapacity {
		if err := r.st.Orders.CreateOrder(ctx, sr.order(1), ev, r.now); err != nil {
			t.Fatalf("order 1 of %d left: %v", raceCapacity-sold, err)
		}
		sold++
	}
	var se *ticketing.StockError
	if err := r.st.Orders.CreateOrder(ctx, sr.order(1), ev, r.now); !errors.As(err, &se) {
		t.Fatalf("an order after the sell-out: %v, want a stock error", err)
	}
	sr.check(t, "sold out")
}

func (sr *shardRace) order(qty int) *ticketing.Order {
	o := sr.r.order(qty, "")
	o.EventID, o.Lines[0].TierID = raceEvent, raceTier
	return o
}

// client buys until the tier is sold out; with churn, each client's first
// order may expire, or be paid and refunded.
func (sr *shardRace) client(ctx context.Context) error {
	qty, orders := 1+rand.IntN(2), 0
	for failures := 0; ; {
		o := sr.order(qty)
		err := sr.r.st.Orders.CreateOrder(ctx, o, sr.e, sr.r.now)
		var se *ticketing.StockError
		switch {
		case errors.As(err, &se) && qty == 1:
			if sr.soldOut(ctx) {
				return nil
			}
			continue
		case errors.As(err, &se):
			qty = 1
			continue
		case err != nil:
			if failures++; failures > 20 {
				return err
			}
			continue
		}
		sr.live.Add(int64(qty))
		orders++
		if sr.churn && orders == 1 {
			if err := sr.giveBack(ctx, o, rand.IntN(8)); err != nil {
				return err
			}
		}
		qty = 1 + rand.IntN(2)
	}
}

// giveBack lets o expire (way 0), pays and refunds it (way 1), or keeps it
// (ways 2 to 7). A step that meets only transaction conflicts (the shard
// items are hot) is retried, as the timers retry it.
func (sr *shardRace) giveBack(ctx context.Context, o *ticketing.Order, way int) error {
	r := sr.r
	switch way {
	case 0:
		c := *o
		c.Status, c.CancelReason = ticketing.OrderCancelled, "expired"
		if err := retried(func() error {
			return r.st.Orders.CancelOrder(ctx, &c, r.event(ticketing.EventOrderCancelled, &c), o.ExpiresAt, true)
		}); err != nil {
			return err
		}
	case 1:
		p := *o
		paid := r.now
		p.Status, p.PaidAt, p.TicketNumber = ticketing.OrderPaid, &paid, r.id("TIX-R")
		if err := retried(func() error {
			return r.st.Orders.ConfirmOrder(ctx, &p, r.event(ticketing.EventOrderPaid, &p), r.now, false)
		}); err != nil {
			return err
		}
		p.Refund = &ticketing.Refund{ID: r.id("rfd_r"), Status: ticketing.RefundPending, Amount: p.TotalPrice, Currency: "RUB", CreatedAt: r.now}
		if err := retried(func() error { return r.st.Orders.StartRefund(ctx, &p) }); err != nil {
			return err
		}
		p.Status = ticketing.OrderRefunded
		if err := retried(func() error { return r.st.Orders.CompleteRefund(ctx, &p, r.event(ticketing.EventOrderRefunded, &p)) }); err != nil {
			return err
		}
	default:
		return nil
	}
	sr.live.Add(-int64(o.Quantity))
	return nil
}

// retried runs step until it succeeds, fails on a condition (the order's
// state: a real failure), or has failed 5 times.
func retried(step func() error) error {
	var err error
	for range 5 {
		if err = step(); err == nil || errors.Is(err, ticketing.ErrStateChanged) {
			return err
		}
	}
	return err
}

// check reads the tier's shards: none below 0 or over its cap, availability
// as the catalog computes it; it returns the units sold.
func (sr *shardRace) check(t *testing.T, what string) int {
	t.Helper()
	st, err := sr.r.st.Catalog.GetStock(context.Background(), raceEvent, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	k := ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: raceTier}
	caps := ticketing.ShardCaps(raceCapacity)
	for sh, n := range st.Shards[k] {
		if sh >= len(caps) || n < 0 || n > caps[sh] {
			t.Fatalf("%s: shard %d holds %d (cap %v)", what, sh, n, caps)
		}
	}
	c := st.TierCount(sr.e, &sr.e.Tiers[0], "", sr.r.now)
	if c.Sold != st.Sold[k] || c.Available != raceCapacity-c.Sold {
		t.Fatalf("%s: count %+v, sold %d", what, c, st.Sold[k])
	}
	return c.Sold
}
