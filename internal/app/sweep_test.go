package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
)

// lostWork is the "timers" count of every "sweep did lost work" record written so far.
func lostWork(t *testing.T, logs *testenv.SyncBuffer) []float64 {
	t.Helper()
	var counts []float64
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if len(line) == 0 || json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "sweep did lost work" {
			continue
		}
		n, _ := rec["timers"].(float64)
		counts = append(counts, n)
	}
	return counts
}

// The sweep's "sweep did lost work" record means lost work: a timer due just
// now (its queue message about to be consumed) and one overdue by less than
// TIX_SWEEP_GRACE are left to the timers queue, and nothing is logged for
// them; one overdue past the grace is done and logged.
func TestSweep_LogsLostWorkOnlyForTimersOverdueByTheGrace(t *testing.T) {
	clk := clock.NewFixed(time.Now())
	a := lambdaenv.NewWithClock(t, clk).App
	ctx := context.Background()
	c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}, KeyID: "key_l"}
	tier, qty, buyer := "tier_l", 1, "b@example.com"
	res, err := a.Sales.Orders.CreateOrder(ctx, c, "sweep-log", ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &buyer}, TierID: &tier, Quantity: &qty})
	if err != nil {
		t.Fatal(err)
	}
	o := res.Order
	logs := &testenv.SyncBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	for _, at := range []time.Time{o.ExpiresAt, o.ExpiresAt.Add(time.Minute - time.Second)} {
		clk.Set(at)
		if err := a.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got, err := a.Store.Orders.GetOrder(ctx, o.ID); err != nil || got.Status != ticketing.OrderPending {
			t.Fatalf("order %v %v after a sweep %s past its expiry, want pending (the queue's timer)", got, err, at.Sub(o.ExpiresAt))
		}
		for _, n := range lostWork(t, logs) {
			if n != 0 {
				t.Fatalf("a sweep %s past the expiry logged %v lost timers, want none", at.Sub(o.ExpiresAt), n)
			}
		}
	}
	clk.Set(o.ExpiresAt.Add(time.Minute))
	if err := a.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Store.Orders.GetOrder(ctx, o.ID); err != nil || got.Status != ticketing.OrderCancelled {
		t.Fatalf("order %v %v after a sweep a grace past its expiry, want cancelled", got, err)
	}
	if counts := lostWork(t, logs); len(counts) == 0 || counts[len(counts)-1] != 1 {
		t.Fatalf("lost-work records %v, want one naming the lost timer", counts)
	}
}
