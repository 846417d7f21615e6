package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/webhook"
)

// tixctl webhooks replay starts a replay of a verified endpoint (its first
// page queued on the deliveries queue, fauxqs here), the same
// --idempotency-key answers the same replay, --show reads its progress, and a
// since more than 30 days back is refused naming --since's rule.
func TestWebhooks_Replay(t *testing.T) {
	ctx := context.Background()
	prefix := testenv.UniqueName("tixctl-replay")
	qc, err := queue.Open(ctx, "us-east-1", testenv.SQSEndpoint(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := qc.EnsureQueues(ctx); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TIX_SQS_ENDPOINT", testenv.SQSEndpoint(t))
	t.Setenv("TIX_QUEUE_PREFIX", prefix)
	c, _ := newCLI(t)
	newOrganizer(t, c, "org_rp")
	rcv := newReceiver(t)
	var ep cliEndpoint
	c.json(0, &ep, "webhooks", "create", "--organizer", "org_rp", "--env", "test", "--url", rcv.url("/echo"))
	var verified struct {
		Verified bool `json:"verified"`
	}
	c.json(0, &verified, "webhooks", "verify", ep.ID)

	since := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	var a, b, shown webhook.ReplayObject
	c.json(0, &a, "webhooks", "replay", ep.ID, "--since", since, "--idempotency-key", "k1")
	if !strings.HasPrefix(a.ID, "wrp_") || a.Object != "webhook_replay" || a.EndpointID != ep.ID || a.Status != webhook.ReplayQueued || strconv.FormatInt(a.Since, 10) != since {
		t.Fatalf("replay = %+v", a)
	}
	if n, err := qc.Depth(ctx, queue.DeliveriesQueue); err != nil || n != 1 {
		t.Errorf("deliveries queue holds %d messages (%v), want the replay's first page", n, err)
	}
	c.json(0, &b, "webhooks", "replay", ep.ID, "--since", since, "--idempotency-key", "k1")
	if b.ID != a.ID {
		t.Errorf("the same key made replays %s and %s", a.ID, b.ID)
	}
	c.json(0, &shown, "webhooks", "replay", ep.ID, "--show", a.ID)
	if shown != a {
		t.Errorf("--show = %+v, want %+v", shown, a)
	}
	var e cliError
	c.json(1, &e, "webhooks", "replay", ep.ID, "--since", "2020-01-01T00:00:00Z")
	if e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, "30 days") {
		t.Errorf("an old since: %+v", e)
	}
	code, out, _ := c.run("webhooks", "replay", ep.ID, "--show", a.ID)
	if code != 0 || !strings.Contains(out, "Replay "+a.ID) || !strings.Contains(out, "--show "+a.ID) {
		t.Errorf("human output (exit %d):\n%s", code, out)
	}
}
