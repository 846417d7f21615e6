// Command orders is the Lambda of the orders group: /orders and /orders/*.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tix/internal/api"
	"tix/internal/app"
)

func main() { lambda.Start(handler(app.FromEnv())) }

// handler is the Lambda entry point over the orders group of the HTTP API.
func handler(a *app.App) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	app.EnableDoor(a) // GET /orders/{id}/tickets shows signed codes
	return a.LambdaHTTP(a.Server.Handler(api.GroupOrders))
}
