package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// Per-client counters at the model's rate, with DynamoDB's transaction
// conflicts (testenv.ConflictProxy, stretched as in
// TestOnSaleAtTheModelsRateUnderTransactionConflicts): 5,000 orders/s of
// one tier come from clients each at the most a client gets
// (api.MaxClientWritesPerSecond, 25 a second, whatever its budget), every
// order taken on its client's pending-order counter and given back when it
// is paid: 50 transactions a second on each counter, the healthy rate.
// Every order is created and paid within its bounded retries, and every
// counter is back at zero.
func TestOnSaleClientCountersAtTheirMostUnderTransactionConflicts(t *testing.T) {
	const (
		orders     = 400
		clientRate = 25 // api.MaxClientWritesPerSecond
		clients    = modelRate / clientRate
	)
	st, proxy, now := atModelsRate(t)
	ctx := context.Background()
	ev := ticketingtest.Event(now)
	ev.ID, ev.Ref, ev.HasSeating, ev.Seating, ev.Zones, ev.Promos = "evt_onsale_cc", "onsale-cc", false, nil, nil, nil
	ev.Tiers = []ticketing.Tier{{ID: "tier_cc", Name: "GA", Price: 150000, Capacity: 20000, PersonsIncluded: 1}}
	if err := st.Catalog.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	clientKey := func(c int) string {
		return fmt.Sprintf("%s#%s#10.0.%d.%d#%s", ticketingtest.Org, ticketing.EnvTest, c/256, c%256, ev.ID)
	}
	failed, firstErr := offerAll(orders, func(i int) error { return clientOrder(ctx, st, ev, now, i, clientKey(i%clients)) })
	t.Logf("%d orders from %d clients: %d transactions, %d cancelled for a conflict; hottest %v",
		orders, clients, proxy.Transactions(), proxy.Conflicts(), proxy.Hottest(3))
	if failed > 0 {
		t.Fatalf("%d of %d orders failed; one: %v", failed, orders, firstErr)
	}
	for c := range min(clients, orders) {
		if n, u, err := st.ClientCapCount(ctx, clientKey(c)); err != nil || n != 0 || u != 0 {
			t.Fatalf("client %d's counter: %d orders, %d units (%v), want none", c, n, u, err)
		}
	}
}

// clientOrder creates order i of one ticket from the client of key and pays it.
func clientOrder(ctx context.Context, st *store.Store, ev *ticketing.Event, now time.Time, i int, key string) error {
	o := &ticketing.Order{ID: fmt.Sprintf("ord_cc%014d", i), OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest,
		Type: ticketing.OrderTypeTicket, Status: ticketing.OrderPending, EventID: ev.ID, EventTitle: ev.Title,
		Lines:    []ticketing.OrderLine{{TierID: "tier_cc", TierName: "GA", UnitPrice: 150000, Quantity: 1}},
		Quantity: 1, Currency: "RUB", BasePrice: 150000, TotalPrice: 150000,
		Buyer: ticketing.Buyer{Email: fmt.Sprintf("c%d@example.com", i)}, KeyID: "key_cc", CreatedAt: now, ExpiresAt: now.Add(15 * time.Minute),
		ClientCap: &ticketing.ClientCap{Key: key, MaxOrders: 3, MaxUnits: 10}}
	if err := st.Orders.CreateOrder(ctx, o, ev, now); err != nil {
		return fmt.Errorf("create %s: %w", o.ID, err)
	}
	paid := now
	o.Status, o.PaidAt, o.TicketNumber = ticketing.OrderPaid, &paid, fmt.Sprintf("TIX-CC%06d", i)
	e := &ticketing.OrderEvent{ID: fmt.Sprintf("evt_cc%014d", i), Type: ticketing.EventOrderPaid, OrganizerID: o.OrganizerID,
		Environment: o.Environment, CreatedAt: now, Order: o.Webhook()}
	if err := st.Orders.ConfirmOrder(ctx, o, e, now, false); err != nil {
		return fmt.Errorf("pay %s: %w", o.ID, err)
	}
	return nil
}

// The model's rate and how tests stand in for it: an item is held about
// modelHold per transaction on AWS; a test offers localRate orders/s.
const (
	modelRate = 5000
	modelHold = 10 * time.Millisecond
	localRate = 50
)

// atModelsRate is a store behind a testenv.ConflictProxy that keeps items
// as busy as AWS does at modelRate orders/s while a test offers localRate:
// the proxy's hold and the store's waits after a conflict (5 ms) stretched
// by modelRate/localRate. now is the store's fixed clock.
func atModelsRate(t *testing.T) (*store.Store, *testenv.ConflictProxy, time.Time) {
	t.Helper()
	stretch := time.Duration(modelRate / localRate)
	return testenv.StoreUnderConflicts(t, modelHold*stretch, 5*time.Millisecond*stretch)
}

// offer runs f(0..n-1) at localRate calls a second, each on its own
// goroutine, and waits for them all.
func offer(n int, f func(i int)) {
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / localRate)
	defer tick.Stop()
	for i := range n {
		<-tick.C
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// offerAll is offer of calls that may fail: how many did, and the first error.
func offerAll(n int, f func(i int) error) (failed int, first error) {
	var mu sync.Mutex
	offer(n, func(i int) {
		if err := f(i); err != nil {
			mu.Lock()
			defer mu.Unlock()
			if failed++; first == nil {
				first = err
			}
		}
	})
	return failed, first
}
