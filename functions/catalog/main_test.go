package main

import (
	"testing"

	"tix/internal/testenv/lambdaenv"
)

// The Lambda entry point, fed the API Gateway v2 events of events/ (DynamoDB Local behind),
// over the small seated event and an on-sale event whose tiers of thousands are read by shard.
func TestHandler_SampleAPIGatewayEvents(t *testing.T) {
	env := lambdaenv.New(t)
	env.AddOnSale(t)
	env.EnableEmail() // as deployed with a sender: secret keys' client IPs are recorded
	env.Record()
	lambdaenv.RunAPIEvents(t, handler(env.App), "catalog-", env.Vars)
	calls := env.CheckAccess(t, "catalog")                   // what its IAM role allows on AWS
	lambdaenv.CheckNoKeyItemWrites(t, calls)                 // authenticating reads the key, never writes it
	lambdaenv.CheckCalled(t, calls, "dynamodb:BatchGetItem") // the on-sale tiers' shards were read
}
