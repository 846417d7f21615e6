package main

import (
	"context"
	"testing"

	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
)

// The Lambda entry point, fed the API Gateway v2 events of events/ (DynamoDB Local behind),
// over the fixture orders the events act on (pending, paid, refunding), the
// fixture transfers (pending, to accept, to cancel, a ticket to offer) and an
// on-sale event: a sold-out tier (409 after reading its shards) and a late
// payment reinstated on the last two places, one in each shard.
func TestHandler_SampleAPIGatewayEvents(t *testing.T) {
	env := lambdaenv.NewWithSettings(t, nil, map[string]string{"TIX_PUBLIC_URL": lambdaenv.PublicURL}) // transfers' accept links
	env.AddOrders(t)
	env.AddTransfers(t)
	env.AddOnSale(t)
	env.EnableEmail() // as deployed with a sender: secret keys' client IPs are recorded
	env.Record()
	lambdaenv.RunAPIEvents(t, handler(env.App), "orders-", env.Vars)
	if env.App.Sales.Orders.Door == nil || env.App.Server.TicketKeys == nil {
		t.Fatal("the orders function refunds and shows tickets without the door (app.EnableDoor): admitted tickets would be refundable")
	}
	calls := env.CheckAccess(t, "orders")                    // what its IAM role allows on AWS
	lambdaenv.CheckNoKeyItemWrites(t, calls)                 // authenticating reads the key, never writes it
	lambdaenv.CheckCalled(t, calls, "dynamodb:BatchGetItem") // the refused tiers' shards were read
	o, err := env.App.Store.Orders.GetOrder(context.Background(), env.Vars["LATE_ORDER_ID"])
	if err != nil || o.Status != ticketing.OrderPaid || o.LatePayment == nil || o.LatePayment.Outcome != ticketing.LateReinstated {
		t.Fatalf("late order %+v %v: want paid, reinstated on the last places", o, err)
	}
}
