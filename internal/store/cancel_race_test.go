package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"tix/internal/ticketing"
)

// POST /orders/{id}/cancel racing the order's payment on DynamoDB Local: the
// order ends paid (3 tickets, 3 sold, every cancel refused) or cancelled (no
// tickets, nothing sold, exactly one cancel answered 200), one transition
// either way. Money for an order the cancel won takes the late-payment path:
// the order is reinstated with its tickets, never paid without them.
func TestConcurrency_CancelAndPaymentRace(t *testing.T) {
	seen := map[ticketing.OrderStatus]int{}
	for round := range 6 {
		env := newSalesEnv(t, 10)
		ctx := context.Background()
		res, err := env.sales.Orders.CreateOrder(ctx, env.c, "race", gaRequest(3))
		if err != nil {
			t.Fatal(err)
		}
		id := res.Order.ID
		var cancelled, paid atomic.Int32
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				if (i+round)%2 == 0 {
					if _, err := env.sales.Orders.CancelOrder(ctx, env.c, id, ""); err == nil {
						cancelled.Add(1)
					} else if !ticketing.IsCode(err, ticketing.CodeConflict) {
						t.Errorf("cancel: %v", err)
					}
				} else if o, err := env.sales.Orders.Simulate(ctx, env.c.Tenant, id, ticketing.OutcomePaid); err == nil && o.Status == ticketing.OrderPaid {
					paid.Add(1)
				}
			})
		}
		wg.Wait()
		o, err := env.st.Orders.GetOrder(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		seen[o.Status]++
		sold := env.sold(t)
		switch o.Status {
		case ticketing.OrderPaid:
			if sold != 3 || len(o.Tickets) != 3 || cancelled.Load() != 0 {
				t.Fatalf("round %d: paid with sold %d, %d tickets, %d cancels answered 200", round, sold, len(o.Tickets), cancelled.Load())
			}
		case ticketing.OrderCancelled:
			if sold != 0 || len(o.Tickets) != 0 || o.CancelReason != ticketing.CancelRequested || cancelled.Load() != 1 || paid.Load() != 0 {
				t.Fatalf("round %d: cancelled (%s) with sold %d, %d tickets, %d cancels and %d payments answered as won",
					round, o.CancelReason, sold, len(o.Tickets), cancelled.Load(), paid.Load())
			}
			// The buyer's money arrives after all: reinstated with its tickets.
			late, err := env.sales.Orders.Simulate(ctx, env.c.Tenant, id, ticketing.OutcomeLatePayment)
			if err != nil || late.Status != ticketing.OrderPaid || len(late.Tickets) != 3 || env.sold(t) != 3 {
				t.Fatalf("round %d: late payment of the cancelled order: %+v, %v, sold %d", round, late, err, env.sold(t))
			}
		default:
			t.Fatalf("round %d: status %s, want paid or cancelled", round, o.Status)
		}
		if o.Version != 2 {
			t.Fatalf("round %d: version %d, want 2 (one transition)", round, o.Version)
		}
	}
	t.Logf("outcomes over the rounds: %v", seen)
}
