package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
)

// An Idempotency-Key with a comma is refused alike on AWS (the Lambda adapter
// splits the header on commas) and by the local runner (the router over
// net/http, which keeps the header whole): 400 invalid_request, param
// Idempotency-Key, and no order.
func TestHandler_IdempotencyKeyWithACommaIsRefusedAsLocally(t *testing.T) {
	env := lambdaenv.New(t)
	samples := testenv.LoadAPIEvents(t, "orders-create-comma-idempotency-key", env.Vars)
	if len(samples) != 1 {
		t.Fatalf("%d sample events, want orders-create-comma-idempotency-key.json", len(samples))
	}
	ev := samples[0].Event
	res, err := handler(env.App)(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	lambdaCode, lambdaParam := res.StatusCode, errorParam(t, res.Body)

	req := httptest.NewRequest(ev.RequestContext.HTTP.Method, ev.RawPath, strings.NewReader(ev.Body))
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	req.RemoteAddr = ev.RequestContext.HTTP.SourceIP + ":40000"
	rec := httptest.NewRecorder()
	env.App.Server.Handler().ServeHTTP(rec, req) // what `make run` serves
	localCode, localParam := rec.Code, errorParam(t, rec.Body.String())

	if lambdaCode != http.StatusBadRequest || lambdaParam != "Idempotency-Key" {
		t.Errorf("Lambda: %d param %q, want 400 Idempotency-Key: %s", lambdaCode, lambdaParam, res.Body)
	}
	if localCode != lambdaCode || localParam != lambdaParam {
		t.Errorf("local runner: %d param %q, Lambda: %d param %q: %s", localCode, localParam, lambdaCode, lambdaParam, rec.Body)
	}
}

func errorParam(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Param string }
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error.Param
}
