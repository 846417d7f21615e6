package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// A due-timer marker exists exactly while its transition is owed: the order's
// expiry from creation until payment, the refund's settlement from its start
// until it completes; DueTimers returns only the markers that are due, and the
// sweep completes what the markers name, with no timer ever sent.
func TestDueTimers_FollowTheOrder(t *testing.T) {
	env := newSalesEnv(t, 10)
	ctx := context.Background()
	due := func(at time.Time) []ticketing.Timer {
		t.Helper()
		ts, err := env.st.Due.DueTimers(ctx, at, 10)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	res, err := env.sales.Orders.CreateOrder(ctx, env.c, "due-1", gaRequest(2))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Order.ID
	if ts := due(env.now); len(ts) != 0 {
		t.Fatalf("timers due before the expiry: %v", ts)
	}
	ts := due(res.Order.ExpiresAt)
	if len(ts) != 1 || ts[0].Kind != ticketing.TimerOrderExpiry || ts[0].OrderID != id || !ts[0].Due.Equal(res.Order.ExpiresAt) {
		t.Fatalf("due at the expiry: %+v, want the order's expiry", ts)
	}
	if _, err := env.sales.Orders.Simulate(ctx, env.c.Tenant, id, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	if ts := due(env.now.Add(time.Hour)); len(ts) != 0 {
		t.Fatalf("timers owed by a paid order: %+v", ts)
	}
	r, err := env.sales.Orders.RefundOrder(ctx, env.c.Tenant, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts = due(*r.SettleAt)
	if len(ts) != 1 || ts[0].Kind != ticketing.TimerRefundSettle || ts[0].OrderID != id {
		t.Fatalf("due at the settlement: %+v, want the refund's settlement", ts)
	}
	env.clk.Set(r.SettleAt.Add(time.Minute)) // the sweep's grace: until then the timer is the queue's
	if n, err := env.sales.Orders.SweepDue(ctx, 10); err != nil || n != 1 {
		t.Fatalf("sweep handled %d, %v; want 1", n, err)
	}
	o, err := env.st.Orders.GetOrder(ctx, id)
	if err != nil || o.Status != ticketing.OrderRefunded {
		t.Fatalf("order %+v %v after the sweep, want refunded", o, err)
	}
	if n := env.sold(t); n != 0 {
		t.Fatalf("sold %d after the refund, want 0", n)
	}
	if ts := due(env.now.Add(time.Hour)); len(ts) != 0 {
		t.Fatalf("timers owed by a refunded order: %+v", ts)
	}
}

// The sweep expires a pending order whose expiry timer was never sent, once
// the timer is overdue by the sweep's grace (TIX_SWEEP_GRACE, 1m): until then
// the timer is the queue's, whose message may be about to be consumed.
func TestDueTimers_SweepExpires(t *testing.T) {
	env := newSalesEnv(t, 10)
	ctx := context.Background()
	res, err := env.sales.Orders.CreateOrder(ctx, env.c, "due-2", gaRequest(3))
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{env.now, res.Order.ExpiresAt, res.Order.ExpiresAt.Add(59 * time.Second)} {
		env.clk.Set(at)
		if n, err := env.sales.Orders.SweepDue(ctx, 10); err != nil || n != 0 {
			t.Fatalf("sweep %s after the expiry handled %d, %v; want none", at.Sub(res.Order.ExpiresAt), n, err)
		}
	}
	if o, err := env.st.Orders.GetOrder(ctx, res.Order.ID); err != nil || o.Status != ticketing.OrderPending {
		t.Fatalf("order %+v %v after sweeps within the grace, want pending", o, err)
	}
	env.clk.Set(res.Order.ExpiresAt.Add(time.Minute))
	if n, err := env.sales.Orders.SweepDue(ctx, 10); err != nil || n != 1 {
		t.Fatalf("sweep handled %d, %v; want 1", n, err)
	}
	o, err := env.st.Orders.GetOrder(ctx, res.Order.ID)
	if err != nil || o.Status != ticketing.OrderCancelled {
		t.Fatalf("order %+v %v after the sweep, want cancelled", o, err)
	}
	if n := env.sold(t); n != 0 {
		t.Fatalf("sold %d after expiry, want 0", n)
	}
	if ts, err := env.st.Due.DueTimers(ctx, env.now.Add(time.Hour), 10); err != nil || len(ts) != 0 {
		t.Fatalf("timers owed by a cancelled order: %+v %v", ts, err)
	}
}

// Markers written under the former 8 shards are still found by the sweep; one
// that its 64-shard key does not name (nothing would delete it) is handed out
// once and dropped, one that it names stays until its order ends the wait.
func TestDueTimers_LegacyShards(t *testing.T) {
	env := newSalesEnv(t, 10)
	ctx := context.Background()
	due := env.now.Add(-time.Minute)
	moved, kept := "", ""
	for i := 0; moved == "" || kept == ""; i++ {
		id := "ord_legacy" + strconv.Itoa(i)
		misplaced, err := env.st.PutLegacyDueMarker(ctx, ticketing.Timer{Kind: ticketing.TimerOrderExpiry, OrderID: id, Due: due})
		if err != nil {
			t.Fatal(err)
		}
		if misplaced && moved == "" {
			moved = id
		} else if !misplaced && kept == "" {
			kept = id
		}
	}
	ts, err := env.st.Due.DueTimers(ctx, env.now, 1000)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, tm := range ts {
		found[tm.OrderID] = true
	}
	if !found[moved] || !found[kept] {
		t.Fatalf("legacy markers due: %+v; want %s and %s", ts, moved, kept)
	}
	ts, err = env.st.Due.DueTimers(ctx, env.now, 1000)
	if err != nil {
		t.Fatal(err)
	}
	found = map[string]bool{}
	for _, tm := range ts {
		found[tm.OrderID] = true
	}
	if found[moved] || !found[kept] {
		t.Fatalf("second sweep: %+v; want %s dropped and %s kept", ts, moved, kept)
	}
}

// The sweep merges the shards oldest first and stops at the limit.
func TestDueTimers_OldestFirstAcrossShards(t *testing.T) {
	env := newSalesEnv(t, 10)
	ctx := context.Background()
	var ids []string
	for i := range 3 {
		res, err := env.sales.Orders.CreateOrder(ctx, env.c, "due-order-"+strconv.Itoa(i), gaRequest(1))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Order.ID)
		env.clk.Set(env.now.Add(time.Duration(i+1) * time.Second))
	}
	ts, err := env.st.Due.DueTimers(ctx, env.now.Add(time.Hour), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].OrderID != ids[0] || ts[1].OrderID != ids[1] {
		t.Fatalf("due timers %+v; want the expiries of %v, oldest first", ts, ids[:2])
	}
}
