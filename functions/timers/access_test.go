package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/app"
	"tix/internal/emailjobs"
	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
)

// Every table call of the timers function (an order expiry, a refund
// settlement and a sweep, through the real handler) is one its IAM role
// allows on AWS (store.Permissions).
func TestHandler_TableCallsAreThoseItsRoleAllows(t *testing.T) {
	env := lambdaenv.New(t)
	ctx := context.Background()
	a := env.App
	a.Sales.Deps.Settings.TestOrderTTL = time.Second
	a.Sales.Deps.Settings.SweepGrace = 0 // the sweep takes a timer as soon as it is due
	c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}, KeyID: "key_l"}
	tier, qty, buyer := "tier_l", 1, "b@example.com"
	order := func(key string) *ticketing.Order {
		res, err := a.Sales.Orders.CreateOrder(ctx, c, key, ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &buyer}, TierID: &tier, Quantity: &qty})
		if err != nil {
			t.Fatal(err)
		}
		return res.Order
	}
	expiring := order("access-expire")
	refunded := order("access-refund")
	if _, err := a.Sales.Orders.Simulate(ctx, c.Tenant, refunded.ID, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Sales.Orders.RefundOrder(ctx, c.Tenant, refunded.ID, nil); err != nil {
		t.Fatal(err)
	}
	swept := order("access-sweep")
	// Email on: the sweep also sends an overdue email job again.
	app.EnableEmail(a, discard{}, emailrender.TextRenderer{})
	past := time.Now().UTC().Add(-time.Hour)
	if _, err := a.Store.Emails.CreateJobs(ctx, []*emailjobs.Job{{Subject: refunded.ID, Name: "tickets", Kind: emailjobs.KindTickets,
		OrganizerID: "org_l", Environment: ticketing.EnvTest, OrderID: refunded.ID, Status: emailjobs.StatusPending,
		MaxAttempts: 3, NextAttemptAt: past, CreatedAt: past}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)

	env.Record()
	var recs []events.SQSMessage
	for i, tm := range []ticketing.Timer{
		{Kind: ticketing.TimerOrderExpiry, OrderID: expiring.ID, Due: expiring.ExpiresAt},
		{Kind: ticketing.TimerRefundSettle, OrderID: refunded.ID, Due: time.Now().UTC()},
	} {
		body, _ := json.Marshal(tm)
		recs = append(recs, events.SQSMessage{MessageId: string(rune('a' + i)), Body: string(body)})
	}
	if _, err := invokeSQS(a, events.SQSEvent{Records: recs}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(testenv.EventsDir(), "timers-sweep-schedule.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handler(a)(ctx, raw); err != nil {
		t.Fatal(err)
	}
	calls := env.CheckAccess(t, "timers")
	if o, _ := a.Store.Orders.GetOrder(ctx, swept.ID); o.Status != ticketing.OrderCancelled {
		t.Errorf("the sweep left order %s %s", swept.ID, o.Status)
	}
	if o, _ := a.Store.Orders.GetOrder(ctx, expiring.ID); o.Status != ticketing.OrderCancelled {
		t.Errorf("the expiry timer left order %s %s", expiring.ID, o.Status)
	}
	if j, err := a.Store.Emails.GetJob(ctx, refunded.ID+"/tickets"); err != nil || j.Version < 2 {
		t.Errorf("the sweep did not take the overdue email job: %+v %v", j, err)
	}
	t.Logf("%d table calls", len(calls))
}

type discard struct{}

func (discard) Send(context.Context, emailsend.Message) (string, error) { return "x", nil }
