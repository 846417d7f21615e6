// Command holds is the Lambda of the seat-hold group: POST and DELETE /seat-holds.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tix/internal/api"
	"tix/internal/app"
)

func main() { lambda.Start(handler(app.FromEnv())) }

// handler is the Lambda entry point over the holds group of the HTTP API.
func handler(a *app.App) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return a.LambdaHTTP(a.Server.Handler(api.GroupHolds))
}
