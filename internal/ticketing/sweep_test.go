package ticketing_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// sweepGrace is TIX_SWEEP_GRACE's default.
const sweepGrace = time.Minute

// The sweep runs only timers overdue by the grace: a timer due just now is the
// timers queue's (its message is about to be consumed), and one overdue past
// the grace is lost work, which the sweep does.
func TestSweep_TakesOnlyTimersOverdueByTheGrace(t *testing.T) {
	d := newDomain(t)
	if g := d.sales.Deps.Settings.SweepGrace; g != sweepGrace {
		t.Fatalf("default sweep grace %s, want %s", g, sweepGrace)
	}
	ctx := context.Background()
	o := d.order(t, "sweep-grace", gaOrder(2))
	status := func() ticketing.OrderStatus {
		t.Helper()
		got, err := d.st.Orders.GetOrder(ctx, o.ID) // the store's, not a read that expires the order
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	for _, at := range []time.Time{o.ExpiresAt, o.ExpiresAt.Add(sweepGrace - time.Second)} {
		d.clk.Set(at)
		if n, err := d.sales.Orders.SweepDue(ctx, 10); n != 0 || err != nil {
			t.Fatalf("sweep %s after the expiry: handled %d, %v; want none (the queue's timer)", at.Sub(o.ExpiresAt), n, err)
		}
		if st := status(); st != ticketing.OrderPending {
			t.Fatalf("order %s after a sweep within the grace, want pending", st)
		}
	}
	d.clk.Set(o.ExpiresAt.Add(sweepGrace))
	if n, err := d.sales.Orders.SweepDue(ctx, 10); n != 1 || err != nil {
		t.Fatalf("sweep a grace after the expiry: handled %d, %v; want the lost timer", n, err)
	}
	if st := status(); st != ticketing.OrderCancelled {
		t.Fatalf("order %s after the sweep, want cancelled", st)
	}
}
