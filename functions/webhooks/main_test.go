package main

import (
	"testing"

	"tix/internal/testenv/lambdaenv"
)

// The Lambda entry point, fed the API Gateway v2 events of events/ (DynamoDB Local behind),
// over a failed delivery to a verified endpoint that webhooks-redeliver.json redelivers.
func TestHandler_SampleAPIGatewayEvents(t *testing.T) {
	env := lambdaenv.New(t)
	env.AddWebhookDelivery(t)
	env.EnableEmail() // as deployed with a sender: secret keys' client IPs are recorded
	env.Record()
	lambdaenv.RunAPIEvents(t, handler(env.App), "webhooks-", env.Vars)
	calls := env.CheckAccess(t, "webhooks")  // what its IAM role allows on AWS
	lambdaenv.CheckNoKeyItemWrites(t, calls) // authenticating reads the key, never writes it
}
