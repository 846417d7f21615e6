package main

import (
	"testing"

	"tix/internal/testenv/lambdaenv"
)

// The Lambda entry point, fed the API Gateway v2 events of events/ (DynamoDB
// Local behind), over a paid order with one ticket admitted: the keys, a
// check-in, a refused request, an undo and an unknown check-in; every table
// call is one its IAM role allows.
func TestHandler_SampleAPIGatewayEvents(t *testing.T) {
	env := lambdaenv.New(t)
	env.AddCheckIns(t)
	env.Record()
	lambdaenv.RunAPIEvents(t, handler(env.App), "checkins-", env.Vars)
	calls := env.CheckAccess(t, "checkins")
	lambdaenv.CheckNoKeyItemWrites(t, calls)
	lambdaenv.CheckCalled(t, calls, "dynamodb:UpdateItem") // the check-in and the undo
}
