// Command dashboard is the Lambda of the organizer dashboard: /dashboard
// and /dashboard/{proxy+} (below the API's stage), server-rendered pages.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"tix/internal/app"
	"tix/internal/app/dash"
)

func main() { lambda.Start(handler(app.FromEnv())) }

// handler is the Lambda entry point over the dashboard's pages.
func handler(a *app.App) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(dash.NewDashboard(a).Handler()).ProxyWithContext
}
