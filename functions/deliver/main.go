// Command deliver is the Lambda of the deliveries queue: webhook fan-outs and
// attempts, one message each.
package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tix/internal/app"
	"tix/internal/app/sending"
)

// main wires internal/app/sending: the deliver function alone carries the
// email sender and renderer.
func main() { lambda.Start(handler(sending.FromEnv())) }

// handler handles a batch concurrently (one slow receiver does not hold the
// others back) and reports the failed messages (ReportBatchItemFailures), so
// that only those come back.
func handler(a *app.App) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var (
			mu  sync.Mutex
			res events.SQSEventResponse
			wg  sync.WaitGroup
		)
		for _, m := range ev.Records {
			wg.Go(func() {
				if err := a.HandleDeliveryMessage(ctx, []byte(m.Body)); err != nil {
					slog.ErrorContext(ctx, "delivery message failed; it will come back", "message_id", m.MessageId, "error", err)
					mu.Lock()
					res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return res, nil
	}
}
