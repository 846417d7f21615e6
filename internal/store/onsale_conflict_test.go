package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"tix/internal/store"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The on-sale at the model's rate, with DynamoDB's transaction conflicts:
// DynamoDB Local never cancels a transaction because another one holds its
// items, so the orders go through testenv.ConflictProxy, which does. On AWS
// a transaction holds its items for about modelHold; at modelRate orders/s
// of one tier each stock shard item is in modelRate/shards transactions a
// second, busy that rate times modelHold of the time. The test offers
// localRate orders/s and stretches every time the same way (atModelsRate:
// the proxy's hold and the store's waits after a conflict, by
// modelRate/localRate), so each item is busy as much of the time as on AWS
// at modelRate. Every order is created (stock, idempotency record, expiry
// timer, tally) and paid (tally, tickets, outbox): all of them succeed
// within their bounded retries, and the shards hold exactly the units of
// the orders, none over its cap.
func TestOnSaleAtTheModelsRateUnderTransactionConflicts(t *testing.T) {
	const (
		orders   = 600
		capacity = 20000
	)
	st, proxy, now := atModelsRate(t)
	ctx := context.Background()
	ev := ticketingtest.Event(now)
	ev.ID, ev.Ref, ev.HasSeating, ev.Seating, ev.Zones, ev.Promos = "evt_onsale_cf", "onsale-cf", false, nil, nil, nil
	ev.Tiers = []ticketing.Tier{{ID: "tier_cf", Name: "GA", Price: 150000, Capacity: capacity, PersonsIncluded: 1}}
	if err := st.Catalog.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	shards := ticketing.TierStockShards(ev, capacity)
	t.Logf("%d shards: %.0f transactions/s on each at %d orders/s, each item busy %.0f%% of the time",
		shards, float64(modelRate)/float64(shards), modelRate, 100*float64(modelRate)/float64(shards)*modelHold.Seconds())

	start := time.Now()
	failed, firstErr := offerAll(orders, func(i int) error { return onsaleOrder(ctx, st, ev, now, i) })
	placed := orders - failed
	t.Logf("%d orders in %s: %d transactions, %d cancelled for a conflict (%.1f%%), %d orders failed",
		orders, time.Since(start).Round(time.Millisecond), proxy.Transactions(), proxy.Conflicts(),
		100*float64(proxy.Conflicts())/float64(proxy.Transactions()), failed)
	t.Logf("the items most in conflict: %v", proxy.Hottest(5))
	if proxy.Conflicts() == 0 {
		t.Fatal("no transaction was cancelled for a conflict: the proxy did not put the items under load")
	}
	if failed > 0 {
		t.Fatalf("%d of %d orders failed; the first: %v", failed, orders, firstErr)
	}
	stock, err := st.Catalog.GetStock(ctx, ev.ID, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	k := ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: "tier_cf"}
	caps, sum := ticketing.TierShardCaps(ev, capacity), 0
	for sh, n := range stock.Shards[k] {
		if sh >= len(caps) || n < 0 || n > caps[sh] {
			t.Fatalf("shard %d holds %d (caps %v)", sh, n, caps)
		}
		sum += n
	}
	if sum != placed || stock.Sold[k] != sum {
		t.Fatalf("the shards hold %d (sold %d), the orders %d", sum, stock.Sold[k], placed)
	}
}

// onsaleOrder creates order i of one ticket with its idempotency record and pays it.
func onsaleOrder(ctx context.Context, st *store.Store, ev *ticketing.Event, now time.Time, i int) error {
	id := fmt.Sprintf("ord_cf%014d", i)
	o := &ticketing.Order{ID: id, OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest, Type: ticketing.OrderTypeTicket,
		Status: ticketing.OrderPending, EventID: ev.ID, EventTitle: ev.Title,
		Lines:    []ticketing.OrderLine{{TierID: "tier_cf", TierName: "GA", UnitPrice: 150000, Quantity: 1}},
		Quantity: 1, Currency: "RUB", BasePrice: 150000, TotalPrice: 150000,
		Buyer: ticketing.Buyer{Email: fmt.Sprintf("b%d@example.com", i)}, KeyID: "key_cf", CreatedAt: now, ExpiresAt: now.Add(15 * time.Minute)}
	rec := &ticketing.Idempotency{Tenant: ticketing.Tenant{OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest},
		Scope: ticketing.IdemOrder, Key: fmt.Sprintf("key-%d", i), RequestHash: "h", ResourceID: id, Lease: "l",
		LeaseUntil: now.Add(time.Minute), CreatedAt: now}
	if err := st.Orders.CreateOrderWithKey(ctx, o, ev, rec, now); err != nil {
		return fmt.Errorf("create %s: %w", id, err)
	}
	paid := now
	o.Status, o.PaidAt, o.TicketNumber = ticketing.OrderPaid, &paid, fmt.Sprintf("TIX-CF%06d", i)
	e := &ticketing.OrderEvent{ID: fmt.Sprintf("evt_cf%014d", i), Type: ticketing.EventOrderPaid, OrganizerID: o.OrganizerID,
		Environment: o.Environment, CreatedAt: now, Order: o.Webhook()}
	if err := st.Orders.ConfirmOrder(ctx, o, e, now, false); err != nil {
		if errors.Is(err, ticketing.ErrContended) {
			return fmt.Errorf("pay %s: still held by other transactions after every retry: %w", id, err)
		}
		return fmt.Errorf("pay %s: %w", id, err)
	}
	return nil
}

// In a sell-out a refused order does not read every shard of its tier: the
// first refusal reads them, the next ones (within the shard levels' 2 s)
// plan on what it read; stock this process gives back is seen at once.
func TestSellOutRefusalsReadTheShardsOnce(t *testing.T) {
	r := newLateRace(t)
	ctx := context.Background()
	var mu sync.Mutex
	reads := 0
	r.st.OnCapacity(func(op string, _ *types.ConsumedCapacity) {
		if op == "ReadShards" {
			mu.Lock()
			reads++
			mu.Unlock()
		}
	})
	first := r.order(ticketingtest.GACap, "")
	if err := r.st.Orders.CreateOrder(ctx, first, r.e, r.now); err != nil {
		t.Fatal(err)
	}
	var se *ticketing.StockError
	for i := range 5 {
		if err := r.st.Orders.CreateOrder(ctx, r.order(1, ""), r.e, r.now); !errors.As(err, &se) {
			t.Fatalf("order %d after the sell-out: %v, want a stock error", i, err)
		}
	}
	if reads != 1 {
		t.Fatalf("5 refused orders read the shards %d times, want once", reads)
	}
	c := *first
	c.Status, c.CancelReason = ticketing.OrderCancelled, "expired"
	if err := r.st.Orders.CancelOrder(ctx, &c, r.event(ticketing.EventOrderCancelled, &c), first.ExpiresAt, true); err != nil {
		t.Fatal(err)
	}
	if err := r.st.Orders.CreateOrder(ctx, r.order(1, ""), r.e, r.now); err != nil {
		t.Fatalf("an order after the stock came back: %v", err)
	}
}
