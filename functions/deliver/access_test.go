package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/app"
	"tix/internal/emailjobs"
	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/webhook"
)

// Every table call of the deliver function (a fan-out and an attempt, through
// the real handler) is one its IAM role allows on AWS (store.Permissions).
func TestHandler_TableCallsAreThoseItsRoleAllows(t *testing.T) {
	env := lambdaenv.New(t)
	env.AddWebhookDelivery(t) // an endpoint, an order.paid event fanned out, a failed delivery
	ctx := context.Background()
	d, err := env.App.Store.Webhooks.GetDelivery(ctx, env.Vars["DELIVERY_ID"])
	if err != nil {
		t.Fatal(err)
	}
	d.Status, d.FailedAt, d.Attempts = webhook.DeliveryPending, nil, 0
	if err := env.App.Store.Webhooks.SaveDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	// Email on, and a tickets job for the event's order.
	app.EnableEmail(env.App, discard{}, emailrender.TextRenderer{})
	now := time.Now().UTC()
	job := &emailjobs.Job{Subject: *d.OrderID, Name: "tickets", Kind: emailjobs.KindTickets, OrganizerID: d.OrganizerID,
		Environment: d.Environment, OrderID: *d.OrderID, Status: emailjobs.StatusPending, MaxAttempts: 3, NextAttemptAt: now, CreatedAt: now}
	if _, err := env.App.Store.Emails.CreateJobs(ctx, []*emailjobs.Job{job}); err != nil {
		t.Fatal(err)
	}
	o, err := env.App.Store.Orders.GetOrder(ctx, *d.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Store.Emails.AddTestRecipient(ctx, d.OrganizerID, o.Buyer.Email); err != nil { // a test order's email reaches only the organizer's own addresses
		t.Fatal(err)
	}
	env.Record()
	var recs []events.SQSMessage
	for i, m := range []webhook.Message{
		{Kind: webhook.KindFanout, EventID: d.EventID, Due: now},
		{Kind: webhook.KindAttempt, DeliveryID: d.ID, Gen: d.Gen, N: 1, Due: now},
	} {
		body, _ := json.Marshal(m)
		recs = append(recs, events.SQSMessage{MessageId: string(rune('a' + i)), Body: string(body)})
	}
	body, _ := json.Marshal(emailjobs.Message{Kind: emailjobs.KindEmail, JobID: job.ID(), Due: now})
	recs = append(recs, events.SQSMessage{MessageId: "email", Body: string(body)})
	if _, err := handler(env.App)(ctx, events.SQSEvent{Records: recs}); err != nil {
		t.Fatal(err)
	}
	calls := env.CheckAccess(t, "deliver")
	var batch bool
	for _, c := range calls {
		batch = batch || c.Action == "dynamodb:BatchGetItem"
	}
	if j, err := env.App.Store.Emails.GetJob(ctx, job.ID()); err != nil || j.Status != emailjobs.StatusSent {
		t.Errorf("the email job: %+v %v", j, err)
	}
	if !batch {
		t.Errorf("the attempt made no BatchGetItem (calls %+v): is it still what store.Permissions says?", calls)
	}
}

type discard struct{}

func (discard) Send(context.Context, emailsend.Message) (string, error) { return "x", nil }
