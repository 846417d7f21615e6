package main

import (
	"context"
	"net/http"
	"testing"

	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
)

// The Lambda entry point, fed the API Gateway v2 events of events/ (DynamoDB Local behind),
// over the small seated event and an on-sale event whose tiers of thousands are read by shard.
func TestHandler_SampleAPIGatewayEvents(t *testing.T) {
	env := lambdaenv.New(t)
	env.AddOnSale(t)
	env.EnableEmail() // as deployed with a sender: secret keys' client IPs are recorded
	env.Record()
	lambdaenv.RunAPIEvents(t, handler(env.App), "catalog-", env.Vars)
	calls := env.CheckAccess(t, "catalog")                   // what its IAM role allows on AWS
	lambdaenv.CheckNoKeyItemWrites(t, calls)                 // authenticating reads the key, never writes it
	lambdaenv.CheckCalled(t, calls, "dynamodb:BatchGetItem") // the on-sale tiers' shards were read
}

// Lambda freezes an instance as soon as its handler returns: the request
// log's record of a keyed request is written by then, not left to a write in
// the background that the freeze would hold (or lose with the instance).
func TestHandler_RequestLogRecordWrittenBeforeTheInvocationEnds(t *testing.T) {
	env := lambdaenv.New(t)
	h := handler(env.App)
	ping := testenv.LoadAPIEvents(t, "catalog-ping", env.Vars)[0].Event
	for range 10 {
		res, err := h(context.Background(), ping)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("ping: %d %v", res.StatusCode, err)
		}
		id := res.Headers["Tix-Request-Id"]
		rec, err := env.App.Store.RequestLog().GetRequest(context.Background(), id)
		if err != nil || rec == nil || rec.Path != "/v1/ping" || rec.Status != http.StatusOK {
			t.Fatalf("request log of %s right after the invocation: %+v %v", id, rec, err)
		}
	}
}
