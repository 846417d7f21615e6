// Command catalog is the Lambda of the catalog group: /events*, /ping, /health,
// /openapi.json and every unknown route ($default).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"tix/internal/api"
	"tix/internal/app"
	"tix/internal/config"
)

func main() {
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		slog.Error("configuration", "error", err)
		os.Exit(1)
	}
	app.Logger(cfg)
	a, err := app.New(context.Background(), cfg, nil)
	if err != nil {
		slog.Error("start", "error", err)
		os.Exit(1)
	}
	lambda.Start(handler(a))
}

// handler is the Lambda entry point over the catalog group of the HTTP API.
func handler(a *app.App) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(a.Server.Handler(api.GroupCatalog)).ProxyWithContext
}
