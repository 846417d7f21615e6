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
	env := lambdaenv.New(t)
	ctx := context.Background()
	a := env.App
	a.Sales.Settings.TestOrderTTL = time.Second
	c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}, KeyID: "key_l"}
	tier := "tier_l"
	qty := 3
	email := "b@example.com"
	res, err := a.Sales.CreateOrder(ctx, c, "expire-me", ticketing.OrderRequest{
		Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	body, _ := json.Marshal(ticketing.Timer{Kind: ticketing.TimerOrderExpiry, OrderID: res.Order.ID, Due: res.Order.ExpiresAt})
	out, err := invokeSQS(a, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: string(body)}}})
	if err != nil || len(out.BatchItemFailures) != 0 {
		t.Fatalf("handler: %v %+v", err, out)
	}
	o, err := a.Store.GetOrder(ctx, res.Order.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != ticketing.OrderCancelled || o.CancelReason != "expired" {
		t.Fatalf("order %s %s, want cancelled (expired)", o.Status, o.CancelReason)
	}
	st, err := a.Store.GetStock(ctx, "evt_lambda", ticketing.EnvTest, "")
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

// The EventBridge schedule's event runs the sweep: a pending order whose
// expiry timer was lost (never sent here) is expired by it, stock returned;
// an invocation that is neither SQS nor the schedule is refused.
func TestHandler_ScheduledEventSweeps(t *testing.T) {
	env := lambdaenv.New(t)
	ctx := context.Background()
	a := env.App
	a.Sales.Settings.TestOrderTTL = time.Second
	a.Sales.Timers = nil // the expiry timer is lost
	c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}, KeyID: "key_l"}
	tier, qty, email := "tier_l", 2, "b@example.com"
	res, err := a.Sales.CreateOrder(ctx, c, "lost-timer", ticketing.OrderRequest{
		Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(testenv.EventsDir(), "timers-sweep-schedule.json"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := handler(a)(ctx, raw); err != nil || out != nil {
		t.Fatalf("sweep invocation returned %v, %v", out, err)
	}
	if o, _ := a.Store.GetOrder(ctx, res.Order.ID); o.Status != ticketing.OrderPending {
		t.Fatalf("a sweep before the expiry moved the order to %s", o.Status)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := handler(a)(ctx, raw); err != nil {
		t.Fatal(err)
	}
	o, err := a.Store.GetOrder(ctx, res.Order.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != ticketing.OrderCancelled || o.CancelReason != "expired" {
		t.Fatalf("order %s %s after the sweep, want cancelled (expired)", o.Status, o.CancelReason)
	}
	st, err := a.Store.GetStock(ctx, "evt_lambda", ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: tier}]; n != 0 {
		t.Fatalf("sold %d after the sweep, want 0", n)
	}
	if ids, err := a.Store.OverdueOrders(ctx, time.Now().Add(time.Hour), 10); err != nil || len(ids) != 0 {
		t.Fatalf("the expired order is still in the expiry index: %v %v", ids, err)
	}
	if _, err := handler(a)(ctx, json.RawMessage(`{"source":"aws.s3"}`)); err == nil {
		t.Error("an invocation that is neither SQS nor the schedule was accepted")
	}
}
