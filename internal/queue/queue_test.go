package queue_test

import (
	"context"
	"strings"
	"testing"

	"tix/internal/queue"
	"tix/internal/testenv"
)

func TestEnsureQueues_CreatesEachQueueWithDLQAndIsIdempotent(t *testing.T) {
	ctx := context.Background()
	c, err := queue.Open(ctx, "us-east-1", testenv.SQSEndpoint(t), testenv.UniqueName("tix-test"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.EnsureQueues(ctx)
	if err != nil {
		t.Fatalf("first EnsureQueues: %v", err)
	}
	second, err := c.EnsureQueues(ctx)
	if err != nil {
		t.Fatalf("second EnsureQueues: %v", err)
	}
	for _, q := range queue.Queues {
		for _, name := range []string{q, queue.DLQ(q)} {
			if first[name] == "" || first[name] != second[name] {
				t.Errorf("queue %s: urls %q then %q, want the same non-empty url", name, first[name], second[name])
			}
			if !strings.Contains(first[name], c.QueueName(name)) {
				t.Errorf("queue %s url %q does not name %s", name, first[name], c.QueueName(name))
			}
		}
	}
}
