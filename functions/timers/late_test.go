package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/payment/tbanksim"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
)

// A live payment confirmed after its order expired, found by the payment
// check (reconciliation), reinstates the order on the last two places of a
// tier, one in each of its stock shards: its table calls (the shards read by
// BatchGetItem after the first attempt is refused) are ones its role allows.
func TestHandler_LatePaymentCheckTableCallsAreThoseItsRoleAllows(t *testing.T) {
	sim := tbanksim.New(tbanksim.Options{NotifyRetry: time.Hour, Sweep: time.Hour})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	sim.AddTerminal(lambdaenv.TerminalKey, lambdaenv.TerminalPassword)
	env := lambdaenv.NewWithSettings(t, nil, map[string]string{
		"TIX_TBANK_API_URL": srv.URL, "TIX_PUBLIC_URL": "http://127.0.0.1:9", // notifications are not delivered here
		"TIX_LIVE_ORDER_TTL": "2s", "TIX_PAYMENT_CHECK_GRACE": "1s", "TIX_PAYMENT_ACCOUNT_CACHE_TTL": "0s",
	})
	ctx, a := context.Background(), env.App
	env.PutOnSaleEvent(t)
	id := env.LateOrder(t, ticketing.EnvLive)
	timer := func(kind string) {
		t.Helper()
		o, err := a.Store.Orders.GetOrder(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(ticketing.Timer{Kind: kind, OrderID: id, Due: o.ExpiresAt})
		res, err := invokeSQS(a, events.SQSEvent{Records: []events.SQSMessage{{MessageId: kind, Body: string(body)}}})
		if err != nil || len(res.BatchItemFailures) != 0 {
			t.Fatalf("%s: %+v %v", kind, res, err)
		}
	}
	time.Sleep(2100 * time.Millisecond)
	timer(ticketing.TimerOrderExpiry)
	if o, _ := a.Store.Orders.GetOrder(ctx, id); o.Status != ticketing.OrderCancelled {
		t.Fatalf("the expiry left order %s %s", id, o.Status)
	}
	env.SellOnSale(t, ticketing.EnvLive) // all but its 2 places, one in each shard
	sim.SetFaults(tbanksim.Faults{ConfirmAfterDeadline: true})
	if _, err := sim.Settle(id, tbanksim.Pay); err != nil {
		t.Fatal(err)
	}
	// The grace before the payment check, and the 2 s for which the
	// process plans on the shard levels the sale's refusals showed: the
	// reinstatement then reads the shards after its first refusal.
	time.Sleep(2100 * time.Millisecond)
	env.Record()
	timer(ticketing.TimerPaymentCheck)
	calls := env.CheckAccess(t, "timers")
	lambdaenv.CheckCalled(t, calls, "dynamodb:BatchGetItem")
	o, err := a.Store.Orders.GetOrder(ctx, id)
	if err != nil || o.Status != ticketing.OrderPaid || o.LatePayment == nil || o.LatePayment.Outcome != ticketing.LateReinstated {
		t.Fatalf("late order %+v %v: want paid, reinstated on the last places", o, err)
	}
}
