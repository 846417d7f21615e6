package main

import (
	"testing"

	"tix/internal/testenv/lambdaenv"
)

// The Lambda entry point, fed the API Gateway v2 events of events/ (DynamoDB Local behind),
// over the fixture orders the events act on (pending, paid, refunding).
func TestHandler_SampleAPIGatewayEvents(t *testing.T) {
	env := lambdaenv.New(t)
	env.AddOrders(t)
	env.EnableEmail() // as deployed with a sender: secret keys' client IPs are recorded
	env.Record()
	lambdaenv.RunAPIEvents(t, handler(env.App), "orders-", env.Vars)
	calls := env.CheckAccess(t, "orders")    // what its IAM role allows on AWS
	lambdaenv.CheckNoKeyItemWrites(t, calls) // authenticating reads the key, never writes it
}
