package app

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// LambdaHTTP is an API function's Lambda entry point over h (a route group of
// a.Server): API Gateway's proxy event in, its response out, and the request
// log's record of the request written before the invocation ends. Lambda
// freezes an instance once its handler has returned: a write still under way
// would wait for the next invocation (its connection and deadline long gone)
// or be lost with the instance, so here the response waits for it (one
// PutItem, a few milliseconds; docs/aws.md).
func (a *App) LambdaHTTP(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	proxy := httpadapter.NewV2(h).ProxyWithContext
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		res, err := proxy(ctx, req)
		a.Server.FlushRequestLog()
		return res, err
	}
}
