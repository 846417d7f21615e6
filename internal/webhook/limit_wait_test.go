package webhook_test

import (
	"testing"
	"time"

	"tix/internal/queue"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// An attempt refused by a full one-second outbound window is made at the
// start of the next window, within the same message, instead of going back to
// the queue for 1-3 s (a queue delay is whole seconds): sequential payments a
// little faster than the host's limit reached the receiver in ~30 ms, except
// the one in ~26 that waited up to 3 s (the p99 of make load-webhooks).
func TestAttemptOverTheHostLimitWaitsForTheNextWindowNotTheQueue(t *testing.T) {
	t.Parallel()
	h := newHarness(t, false) // the test plays the deliver function
	h.a.Webhooks.Settings.DomainRate = 1
	rc := newReceiver(t)
	h.endpoint(rc, true)
	var attempts [][]byte
	for range 2 {
		o := h.order(h.a.Sales)
		h.simulate(o.ID, ticketing.OutcomePaid)
		msgs := attemptMessages(t, h)
		if len(msgs) != 1 || msgs[0].Kind != webhook.KindFanout {
			t.Fatalf("queue after payment: %+v", msgs)
		}
		if err := h.a.HandleDeliveryMessage(h.ctx, mustJSON(t, msgs[0])); err != nil {
			t.Fatal(err)
		}
		msgs = attemptMessages(t, h)
		if len(msgs) != 1 || msgs[0].Kind != webhook.KindAttempt {
			t.Fatalf("queue after the fan-out: %+v", msgs)
		}
		attempts = append(attempts, mustJSON(t, msgs[0]))
	}
	// Both attempts early in one second: the first takes the host's window.
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 20*time.Millisecond).Sub(now))
	start := time.Now()
	for _, m := range attempts {
		if err := h.a.HandleDeliveryMessage(h.ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	if n := len(rc.events()); n != 2 {
		t.Fatalf("%d events at the receiver when the messages were handled, want 2 (the second in the next window)", n)
	}
	if n, err := h.a.Queue.Depth(h.ctx, queue.DeliveriesQueue); err != nil || n != 0 {
		t.Fatalf("%d messages back in the queue (%v), want 0", n, err)
	}
	// The second waited for the next window (no upper bound: a loaded
	// DynamoDB Local slows every call; the empty queue above shows that the
	// attempt was not sent back to it).
	if elapsed < 900*time.Millisecond {
		t.Errorf("the two attempts took %v, want the rest of the first window (about 1 s)", elapsed)
	}
}
