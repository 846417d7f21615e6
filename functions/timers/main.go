// Command timers is the Lambda of delayed and periodic work: the timers queue
// (order expiry, refund settlement) and the EventBridge schedule that runs the
// sweep every minute.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tix/internal/app"
)

func main() { lambda.Start(handler(app.FromEnv())) }

// invocation is either an SQS batch (Records) or a scheduled event (detail-type).
type invocation struct {
	Records    []events.SQSMessage `json:"Records"`
	DetailType string              `json:"detail-type"`
	Source     string              `json:"source"`
}

// handler takes a timers-queue batch and reports the failed messages
// (ReportBatchItemFailures), so that only those are received again; or a
// scheduled event, and sweeps.
func handler(a *app.App) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var in invocation
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, fmt.Errorf("timers: unrecognised invocation: %w", err)
		}
		if in.DetailType == "Scheduled Event" {
			return nil, a.Sweep(ctx)
		}
		if len(in.Records) == 0 {
			return nil, fmt.Errorf("timers: neither SQS records nor a scheduled event (source %q)", in.Source)
		}
		var res events.SQSEventResponse
		for _, m := range in.Records {
			if err := a.HandleTimerMessage(ctx, []byte(m.Body)); err != nil {
				slog.ErrorContext(ctx, "timer failed", "message_id", m.MessageId, "error", err)
				res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return res, nil
	}
}
