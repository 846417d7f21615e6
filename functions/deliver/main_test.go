package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/app"
	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The SQS sample batch: a fan-out of an unknown event and an attempt of an
// unknown delivery are done (nothing to do; retrying cannot help), and the
// malformed message alone is reported as a batch item failure, to reach the
// dead-letter queue after its receives.
func TestHandler_SampleSQSBatch(t *testing.T) {
	env := lambdaenv.New(t)
	raw, err := os.ReadFile(filepath.Join(testenv.EventsDir(), "deliver-batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	res, err := handler(env.App)(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.BatchItemFailures) != 1 || res.BatchItemFailures[0].ItemIdentifier != ev.Records[2].MessageId {
		t.Fatalf("batch item failures %+v, want only the malformed message", res.BatchItemFailures)
	}
}

// The Lambda wiring (app.New, under app.FromEnv and sending.FromEnv) never lets a webhook
// endpoint reach loopback, where the Lambda runtime API listens
// (127.0.0.1:9001): a test endpoint on loopback is refused when saved, and one
// saved by the local stack is not connected to; only the local stack's
// explicit allowance reaches it.
func TestLambdaWebhooksRefuseLoopback(t *testing.T) {
	env := lambdaenv.New(t)
	ctx := context.Background()
	a := env.App
	if a.Webhooks.Sender.AllowsLoopback() {
		t.Fatal("the Lambda wiring allows loopback webhook endpoints")
	}
	_, _, err := a.Webhooks.CreateEndpoint(ctx, webhook.NewEndpoint{OrganizerID: "org_l", Environment: ticketing.EnvTest,
		URL: "http://127.0.0.1:9001/2018-06-01/runtime/invocation/next"})
	var te *ticketing.Error
	if !errors.As(err, &te) || te.Code != ticketing.CodeInvalidRequest || te.Param != "url" {
		t.Fatalf("a test endpoint on the runtime API's address was saved: %v", err)
	}
	var hits atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer rc.Close()
	local := *a.Webhooks
	app.AllowLoopbackWebhooks(&local, a.Config)
	ep, _, err := local.CreateEndpoint(ctx, webhook.NewEndpoint{OrganizerID: "org_l", Environment: ticketing.EnvTest, URL: rc.URL + "/hooks"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Webhooks.TestEndpoint(ctx, ep.ID)
	if err != nil || res.OK || res.StatusCode != 0 || !strings.Contains(res.Error, "is loopback") || hits.Load() != 0 {
		t.Fatalf("the Lambda wiring reached a loopback endpoint: %+v %v (hits %d)", res, err, hits.Load())
	}
	if res, err := local.TestEndpoint(ctx, ep.ID); err != nil || !res.OK || hits.Load() != 1 {
		t.Fatalf("the local stack's allowance did not reach the receiver: %+v %v", res, err)
	}
}

// No Lambda main grants the loopback allowance (app.New, which they use
// through app.FromEnv or sending.FromEnv, does not: TestLambdaWebhooksRefuseLoopback).
func TestLambdaMainsNeverAllowLoopback(t *testing.T) {
	mains, err := filepath.Glob(filepath.Join("..", "*", "*.go"))
	if err != nil || len(mains) < 6 {
		t.Fatalf("functions' sources: %v %v", mains, err)
	}
	for _, f := range mains {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(f, "_test.go") && strings.Contains(string(src), "AllowLoopback") {
			t.Errorf("%s grants the webhook loopback allowance", f)
		}
	}
}
