package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
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
