package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/app"
	"tix/internal/clock"
	"tix/internal/payment"
	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
)

// The SQS sample batch: a due timer for an unknown order is done (nothing to
// do), a malformed message is reported as a batch item failure (it will go to
// the dead-letter queue after its receives), and only that one.
func TestHandler_SampleSQSBatch(t *testing.T) {
	env := lambdaenv.New(t)
	raw, err := os.ReadFile(filepath.Join(testenv.EventsDir(), "timers-batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	res, err := invokeSQS(env.App, ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.BatchItemFailures) != 1 || res.BatchItemFailures[0].ItemIdentifier != ev.Records[1].MessageId {
		t.Fatalf("batch item failures %+v, want only the malformed message", res.BatchItemFailures)
	}
}

// A pending test order whose expiry timer arrives through the real handler is
// cancelled and its stock returned.
func TestHandler_ExpiresOverdueOrder(t *testing.T) {
	clk := &clock.Shifted{}
	env := lambdaenv.NewWithClock(t, clk)
	ctx := context.Background()
	a := env.App
	a.Sales.Deps.Settings.TestOrderTTL = time.Second
	c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}, KeyID: "key_l"}
	tier := "tier_l"
	qty := 3
	email := "b@example.com"
	res, err := a.Sales.Orders.CreateOrder(ctx, c, "expire-me", ticketing.OrderRequest{
		Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(1100 * time.Millisecond)
	body, _ := json.Marshal(ticketing.Timer{Kind: ticketing.TimerOrderExpiry, OrderID: res.Order.ID, Due: res.Order.ExpiresAt})
	out, err := invokeSQS(a, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: string(body)}}})
	if err != nil || len(out.BatchItemFailures) != 0 {
		t.Fatalf("handler: %v %+v", err, out)
	}
	o, err := a.Store.Orders.GetOrder(ctx, res.Order.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != ticketing.OrderCancelled || o.CancelReason != "expired" {
		t.Fatalf("order %s %s, want cancelled (expired)", o.Status, o.CancelReason)
	}
	st, err := a.Store.Catalog.GetStock(ctx, "evt_lambda", ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: tier}]; n != 0 {
		t.Fatalf("sold %d after expiry, want 0", n)
	}
}

// invokeSQS calls the handler as Lambda does: with the JSON of an SQS event.
func invokeSQS(a *app.App, ev events.SQSEvent) (events.SQSEventResponse, error) {
	raw, err := json.Marshal(ev)
	if err != nil {
		return events.SQSEventResponse{}, err
	}
	out, err := handler(a)(context.Background(), raw)
	if err != nil {
		return events.SQSEventResponse{}, err
	}
	res, ok := out.(events.SQSEventResponse)
	if !ok {
		return events.SQSEventResponse{}, fmt.Errorf("an SQS batch returned %T, want events.SQSEventResponse", out)
	}
	return res, nil
}

// The EventBridge schedule's event runs the sweep: each timer-driven
// transition whose timer could not be sent (the timers queue fails every send)
// is done by it once overdue by TIX_SWEEP_GRACE: a pending order is expired, a refund is settled, and
// their stock is returned; an invocation that is neither SQS nor the schedule
// is refused.
func TestHandler_ScheduledEventSweeps(t *testing.T) {
	clk := &clock.Shifted{}
	env := lambdaenv.NewWithClock(t, clk)
	ctx := context.Background()
	a := env.App
	a.Sales.Deps.Settings.TestOrderTTL = 2 * time.Second
	pay := payment.NewTest(payment.TestOptions{RefundSettleAfter: 2 * time.Second})
	a.Sales.Deps.Payments = func(context.Context, string, ticketing.Environment) (ticketing.PaymentProvider, error) {
		return pay, nil
	}
	a.Sales.Deps.Timers = failingTimers(t, a)
	tenant := ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}
	c := ticketing.Caller{Tenant: tenant, KeyID: "key_l"}
	order := func(key string, qty int) string {
		t.Helper()
		tier, email := "tier_l", "b@example.com"
		res, err := a.Sales.Orders.CreateOrder(ctx, c, key, ticketing.OrderRequest{
			Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
		})
		if err != nil {
			t.Fatal(err)
		}
		return res.Order.ID
	}
	expiring := order("lost-expiry", 2)
	refunded := order("lost-settle", 3)
	if o, err := a.Sales.Orders.Simulate(ctx, tenant, refunded, ticketing.OutcomePaid); err != nil || o.Status != ticketing.OrderPaid {
		t.Fatalf("pay: %v", err)
	}
	if r, err := a.Sales.Orders.RefundOrder(ctx, tenant, refunded, nil); err != nil || r.Status != ticketing.RefundPending {
		t.Fatalf("refund: %+v %v", r, err)
	}
	raw, err := os.ReadFile(filepath.Join(testenv.EventsDir(), "timers-sweep-schedule.json"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := handler(a)(ctx, raw); err != nil || out != nil {
		t.Fatalf("sweep invocation returned %v, %v", out, err)
	}
	if o, _ := a.Store.Orders.GetOrder(ctx, expiring); o.Status != ticketing.OrderPending {
		t.Fatalf("a sweep before the expiry moved the order to %s", o.Status)
	}
	if o, _ := a.Store.Orders.GetOrder(ctx, refunded); o.Status != ticketing.OrderPaid || o.Refund.Status != ticketing.RefundPending {
		t.Fatalf("a sweep before the settlement moved the order to %s", o.Status)
	}
	if n := soldGA(t, a); n != 5 {
		t.Fatalf("sold %d before the sweep, want 5", n)
	}
	clk.Advance(2100*time.Millisecond + a.Sales.Deps.Settings.SweepGrace) // due, and overdue by the sweep's grace
	if _, err := handler(a)(ctx, raw); err != nil {
		t.Fatal(err)
	}
	o, err := a.Store.Orders.GetOrder(ctx, expiring)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != ticketing.OrderCancelled || o.CancelReason != "expired" {
		t.Fatalf("order %s %s after the sweep, want cancelled (expired)", o.Status, o.CancelReason)
	}
	if o, err = a.Store.Orders.GetOrder(ctx, refunded); err != nil {
		t.Fatal(err)
	}
	if o.Status != ticketing.OrderRefunded || o.Refund.Status != ticketing.RefundCompleted {
		t.Fatalf("order %s (refund %s) after the sweep, want refunded", o.Status, o.Refund.Status)
	}
	for _, tk := range o.Tickets {
		if tk.Status != ticketing.TicketRefunded {
			t.Fatalf("ticket %s is %s after the refund, want refunded", tk.Number, tk.Status)
		}
	}
	if n := soldGA(t, a); n != 0 {
		t.Fatalf("sold %d after the sweep, want 0", n)
	}
	if due, err := a.Store.Due.DueTimers(ctx, time.Now().Add(time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("timers still owed after the sweep: %v %v", due, err)
	}
	if _, err := handler(a)(ctx, json.RawMessage(`{"source":"aws.s3"}`)); err == nil {
		t.Error("an invocation that is neither SQS nor the schedule was accepted")
	}
}

// failingTimers is a scheduler over a real queue client whose timers queue
// does not exist: every send fails, as when SQS is down or the process dies
// before sending.
func failingTimers(t *testing.T, a *app.App) *queue.Timers {
	t.Helper()
	q, err := queue.Open(context.Background(), a.Config.Region, a.Config.SQSEndpoint, testenv.UniqueName("tix-noqueue"))
	if err != nil {
		t.Fatal(err)
	}
	timers := queue.NewTimers(q, nil)
	if err := timers.Schedule(context.Background(), ticketing.Timer{Kind: ticketing.TimerOrderExpiry, OrderID: "ord_x", Due: time.Now()}); err == nil {
		t.Fatal("a send to a missing queue succeeded")
	}
	return timers
}

// soldGA is the units of the general-admission tier taken.
func soldGA(t *testing.T, a *app.App) int {
	t.Helper()
	st, err := a.Store.Catalog.GetStock(context.Background(), "evt_lambda", ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	return st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: "tier_l"}]
}
