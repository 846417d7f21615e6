// Command webhooks is the Lambda of the webhooks group: /webhook-endpoints and
// /webhook-deliveries*.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tix/internal/api"
	"tix/internal/app"
)

func main() { lambda.Start(handler(app.FromEnv())) }

// handler is the Lambda entry point over the webhooks group of the HTTP API.
func handler(a *app.App) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	app.EnableSecretScanning(a) // POST /v1/secret-scanning/github, served by this function only
	return a.LambdaHTTP(a.Server.Handler(api.GroupWebhooks))
}
