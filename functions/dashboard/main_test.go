package main

import (
	"testing"

	"tix/internal/testenv/lambdaenv"
)

// The Lambda entry point, fed the dashboard's API Gateway v2 events of
// events/ (DynamoDB Local behind), served below the stage as on AWS.
func TestHandler_SampleAPIGatewayEvents(t *testing.T) {
	env := lambdaenv.NewWithSettings(t, nil, map[string]string{"TIX_DASHBOARD_PATH": "/v1/dashboard", "TIX_PUBLIC_URL": "https://abc123.execute-api.eu-central-1.amazonaws.com"})
	env.Record()
	lambdaenv.RunAPIEvents(t, handler(env.App), "dashboard-", env.Vars)
	env.CheckAccess(t, "dashboard") // what its IAM role allows on AWS
}
