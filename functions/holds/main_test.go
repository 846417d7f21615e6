package main

import (
	"testing"

	"tix/internal/testenv/lambdaenv"
)

// The Lambda entry point, fed the API Gateway v2 events of events/ (DynamoDB Local behind).
func TestHandler_SampleAPIGatewayEvents(t *testing.T) {
	env := lambdaenv.New(t)
	env.EnableEmail() // as deployed with a sender: secret keys' client IPs are recorded
	env.AddHold(t)
	env.AddQueue(t)
	env.Record()
	lambdaenv.RunAPIEvents(t, handler(env.App), "holds-", env.Vars)
	calls := env.CheckAccess(t, "holds")     // what its IAM role allows on AWS
	lambdaenv.CheckNoKeyItemWrites(t, calls) // authenticating reads the key, never writes it
}
