// Command checkins is the Lambda of the door's group: /ticket-keys and
// /check-ins (docs/door.md).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tix/internal/api"
	"tix/internal/app"
)

func main() { lambda.Start(handler(app.FromEnv())) }

// handler is the Lambda entry point over the check-ins group of the HTTP API.
func handler(a *app.App) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	app.EnableDoor(a) // signed ticket codes and check-ins
	return a.LambdaHTTP(a.Server.Handler(api.GroupCheckins))
}
