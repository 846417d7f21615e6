// Command catalog is the Lambda of the catalog group: /events*, /ping, /health,
// /openapi.json and every unknown route ($default).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tix/internal/api"
	"tix/internal/apidocs"
	"tix/internal/app"
)

func main() { lambda.Start(handler(app.FromEnv())) }

// handler is the Lambda entry point over the catalog group of the HTTP API.
func handler(a *app.App) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	a.Server.Docs = apidocs.Redoc() // GET /v1/docs, served by this function only
	return a.LambdaHTTP(a.Server.Handler(api.GroupCatalog))
}
