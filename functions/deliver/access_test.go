package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/testenv/lambdaenv"
	"tix/internal/webhook"
)

// Every table call of the deliver function (a fan-out and an attempt, through
// the real handler) is one its IAM role allows on AWS (store.Permissions).
func TestHandler_TableCallsAreThoseItsRoleAllows(t *testing.T) {
	env := lambdaenv.New(t)
	env.AddWebhookDelivery(t) // an endpoint, an order.paid event fanned out, a failed delivery
	ctx := context.Background()
	d, err := env.App.Store.GetDelivery(ctx, env.Vars["DELIVERY_ID"])
	if err != nil {
		t.Fatal(err)
	}
	d.Status, d.FailedAt, d.Attempts = webhook.DeliveryPending, nil, 0
	if err := env.App.Store.SaveDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	env.Record()
	now := time.Now().UTC()
	var recs []events.SQSMessage
	for i, m := range []webhook.Message{
		{Kind: webhook.KindFanout, EventID: d.EventID, Due: now},
		{Kind: webhook.KindAttempt, DeliveryID: d.ID, Gen: d.Gen, N: 1, Due: now},
	} {
		body, _ := json.Marshal(m)
		recs = append(recs, events.SQSMessage{MessageId: string(rune('a' + i)), Body: string(body)})
	}
	if _, err := handler(env.App)(ctx, events.SQSEvent{Records: recs}); err != nil {
		t.Fatal(err)
	}
	calls := env.CheckAccess(t, "deliver")
	var batch bool
	for _, c := range calls {
		batch = batch || c.Action == "dynamodb:BatchGetItem"
	}
	if !batch {
		t.Errorf("the attempt made no BatchGetItem (calls %+v): is it still what store.Permissions says?", calls)
	}
}
