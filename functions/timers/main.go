// Command timers is the Lambda of the timers queue: delayed work such as order
// expiry and refund settlement (and, later, the sweep).
package main

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tix/internal/app"
)

func main() { lambda.Start(handler(app.FromEnv())) }

// handler handles a batch of timers-queue messages and reports the failed ones
// (ReportBatchItemFailures), so that only those are received again.
func handler(a *app.App) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var res events.SQSEventResponse
		for _, m := range ev.Records {
			if err := a.HandleTimerMessage(ctx, []byte(m.Body)); err != nil {
				slog.ErrorContext(ctx, "timer failed", "message_id", m.MessageId, "error", err)
				res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return res, nil
	}
}
