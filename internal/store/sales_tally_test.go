package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"tix/internal/store"
	"tix/internal/ticketing"
)

// The sales tally counts, in the order transactions themselves: an order
// created in its minute, a payment in its minute with its units and total
// for the event, its ticket revenue per tier, and a completed refund takes
// the tier revenue back. An order that failed (sold out) counts nothing.
func TestSalesTally_CountsCreatedPaidAndRefunded(t *testing.T) {
	env := newSalesEnv(t, 3)
	ctx := context.Background()
	a, err := env.sales.Orders.CreateOrder(ctx, env.c, "tally-a", gaRequest(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.sales.Orders.CreateOrder(ctx, env.c, "tally-b", gaRequest(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := env.sales.Orders.CreateOrder(ctx, env.c, "tally-c", gaRequest(1)); err == nil {
		t.Fatal("a fourth unit of a 3-unit tier was sold")
	}
	env.clk.Set(env.now.Add(90 * time.Second))
	paid, err := env.sales.Orders.Simulate(ctx, env.c.Tenant, a.Order.ID, ticketing.OutcomePaid)
	if err != nil {
		t.Fatal(err)
	}
	tally, err := store.TallyOf(env.st).SalesTally(ctx, salesOrg, ticketing.EnvTest, env.now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	created := tally.Minutes[env.now.Truncate(time.Minute)]
	payMinute := tally.Minutes[env.now.Add(90*time.Second).Truncate(time.Minute)]
	if created.Created != 2 || created.Paid != 0 || payMinute.Paid != 1 || payMinute.Created != 0 {
		t.Errorf("minutes: %+v and %+v; want 2 created, then 1 paid", created, payMinute)
	}
	if got := tally.Events[salesEvent]; got.Units != 2 || got.Revenue != paid.TotalPrice || got.Revenue <= 0 {
		t.Errorf("event sales %+v, want 2 units and %d", got, paid.TotalPrice)
	}
	if other, _ := store.TallyOf(env.st).SalesTally(ctx, salesOrg, ticketing.EnvLive, env.now.Add(-time.Hour)); len(other.Minutes)+len(other.Events) != 0 {
		t.Errorf("live mode's tally has the test orders: %+v", other)
	}
	rev, err := store.TallyOf(env.st).TierRevenue(ctx, salesOrg, ticketing.EnvTest)
	if err != nil || rev[salesEvent][salesGA] != 2*150000 {
		t.Fatalf("tier revenue %v %v, want 300000 for %s", rev, err, salesGA)
	}

	if _, err := env.sales.Orders.RefundOrder(ctx, env.c.Tenant, a.Order.ID, nil); err != nil {
		t.Fatal(err)
	}
	if o, err := env.sales.Tests.RefundOutcome(ctx, env.c.Tenant, a.Order.ID, "settle"); err != nil || o.Status != ticketing.OrderRefunded { // settles now (the test helper)
		t.Fatalf("refund settled: %v, %v; want the order refunded", o, err)
	}
	if rev, err := store.TallyOf(env.st).TierRevenue(ctx, salesOrg, ticketing.EnvTest); err != nil || rev[salesEvent][salesGA] != 0 {
		t.Errorf("tier revenue after the refund %v %v, want 0", rev, err)
	}
}

// 48 orders race on one tier: the tally counts exactly the orders that were
// created (and none of the refused), however the shards interleave.
func TestSalesTally_ConcurrentOrdersCountedExactly(t *testing.T) {
	env := newSalesEnv(t, 40)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := range 48 {
		wg.Go(func() {
			_, err := env.sales.Orders.CreateOrder(ctx, env.c, fmt.Sprintf("race-%d", i), gaRequest(1))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ok++
			}
		})
	}
	wg.Wait()
	tally, err := store.TallyOf(env.st).SalesTally(ctx, salesOrg, ticketing.EnvTest, env.now.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got := tally.Minutes[env.now.Truncate(time.Minute)].Created; got != ok || ok != 40 {
		t.Errorf("the tally counts %d created orders; %d were created, want 40", got, ok)
	}
}
