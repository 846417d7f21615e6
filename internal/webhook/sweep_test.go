package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// failingPublisher is the process dying between an order's commit and the
// fan-out message: nothing is sent.
type failingPublisher struct{}

func (failingPublisher) Publish(context.Context, string) {}

// An event committed but never enqueued is found by the sweep and delivered.
func TestSweepDeliversAnEventThatWasNeverEnqueued(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	rc := newReceiver(t)
	h.endpoint(rc, true)
	h.a.Sales.Deps.Events = failingPublisher{}
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)
	h.settled()
	if n := len(rc.events()); n != 0 {
		t.Fatalf("got %d events without a fan-out message", n)
	}
	rep, err := h.a.Webhooks.Sweep(h.ctx)
	if err != nil || rep.Events != 0 {
		t.Fatalf("a sweep within the grace period took the event: %+v %v", rep, err)
	}
	h.clk.Advance(h.a.Webhooks.Settings.SweepGrace)
	if rep, err = h.a.Webhooks.Sweep(h.ctx); err != nil || rep.Events != 1 {
		t.Fatalf("sweep: %+v %v", rep, err)
	}
	eventFor(t, rc, ticketing.EventOrderPaid, o.ID)
	if rep, err = h.a.Webhooks.Sweep(h.ctx); err != nil || rep.Events != 0 {
		t.Errorf("a second sweep: %+v %v", rep, err)
	}
}

// dropAttempts is the process dying between a delivery's commit and its
// attempt message: the first n attempt messages are lost.
type dropAttempts struct {
	webhook.Queue
	mu sync.Mutex
	n  int
}

func (q *dropAttempts) Send(ctx context.Context, m webhook.Message, delay time.Duration) error {
	q.mu.Lock()
	drop := m.Kind == webhook.KindAttempt && q.n > 0
	if drop {
		q.n--
	}
	q.mu.Unlock()
	if drop {
		return errors.New("process died before the attempt was enqueued")
	}
	return q.Queue.Send(ctx, m, delay)
}

// A delivery committed without its attempt message, and a retry whose message
// is lost, are both found by the sweep once overdue, and delivered.
func TestSweepSendsAttemptsWhoseMessagesWereLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	q := &dropAttempts{Queue: h.a.Webhooks.Queue, n: 1} // the fan-out's attempt message is lost
	h.a.Webhooks.Queue = q
	rc := newReceiver(t)
	rc.status = func(n int) int {
		if n == 1 {
			q.mu.Lock()
			q.n = 1 // and so is the message of the retry after this failure
			q.mu.Unlock()
			return http.StatusBadGateway
		}
		return http.StatusOK
	}
	ep, _ := h.endpoint(rc, true)
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)
	h.settled() // the fan-out is handled: the delivery exists, its attempt message lost
	if n := len(rc.events()); n != 0 {
		t.Fatalf("got %d POSTs though the attempt message was lost", n)
	}
	sweepUntil := func(want int) {
		t.Helper()
		// Past the attempt's due time (the schedule waits at most 1 s here) and the grace.
		h.clk.Advance(time.Second + h.a.Webhooks.Settings.SweepGrace)
		testenv.WaitFor(t, 30*time.Second, "the sweep to resend", func() bool {
			if _, err := h.a.Webhooks.Sweep(h.ctx); err != nil {
				t.Fatal(err)
			}
			return len(rc.events()) >= want
		})
	}
	sweepUntil(1)
	id := webhook.DeliveryID(rc.events()[0].Env.ID, ep.ID)
	// The failure is recorded (and its retry message lost) before time moves on.
	testenv.WaitFor(t, 30*time.Second, "attempt 1 recorded", func() bool { return h.delivery(id).Attempts == 1 })
	sweepUntil(2)
	testenv.WaitFor(t, 30*time.Second, "delivered", func() bool { return h.delivery(id).Status == webhook.DeliveryDelivered })
	if d := h.delivery(id); d.Attempts != 2 {
		t.Errorf("attempts %d, want 2: %+v", d.Attempts, d.Log)
	}
	if q.n != 0 {
		t.Errorf("%d attempt messages were still to be lost: the test did not cut where it meant to", q.n)
	}
}

// failSaveOnce is the process dying after the POST and before the attempt is
// recorded: the message comes back and the attempt is made again, counted once.
type failSaveOnce struct {
	webhook.Store
	mu     sync.Mutex
	failed bool
}

func (s *failSaveOnce) SaveDelivery(ctx context.Context, d *webhook.Delivery) error {
	s.mu.Lock()
	fail := !s.failed && d.Attempts > 0
	s.failed = s.failed || fail
	s.mu.Unlock()
	if fail {
		return errors.New("process died before recording the attempt")
	}
	return s.Store.SaveDelivery(ctx, d)
}

// attemptMessages takes the deliveries queue's messages: it counts what is
// queued, delayed messages included (everything the handlers have sent so
// far, since a send returns once the message is stored), then receives and
// deletes that many, waiting for delayed ones to become visible.
func attemptMessages(t *testing.T, h *harness) []webhook.Message {
	t.Helper()
	n, err := h.a.Queue.Depth(h.ctx, queue.DeliveriesQueue)
	if err != nil {
		t.Fatal(err)
	}
	var out []webhook.Message
	testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("the %d queued messages", n), func() bool {
		ms, err := h.a.Queue.Receive(h.ctx, queue.DeliveriesQueue, 10, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			var msg webhook.Message
			if err := json.Unmarshal(m.Body, &msg); err != nil {
				t.Fatal(err)
			}
			out = append(out, msg)
			if err := h.a.Queue.Delete(h.ctx, queue.DeliveriesQueue, m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
		return len(out) >= n
	})
	return out
}

// SQS delivers a message twice (in turn and at once): the attempt is recorded
// once and exactly one next attempt is scheduled. A crash between POST and
// record makes the attempt again, still counted once.
func TestDuplicateMessagesDoNotCorruptAttempts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, false) // the test plays the deliver function
	rc := newReceiver(t)
	rc.status = func(int) int { return http.StatusInternalServerError }
	h.a.Webhooks.Settings.DisableFailuresNew = 100
	ep, _ := h.endpoint(rc, true)
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)

	msgs := attemptMessages(t, h)
	if len(msgs) != 1 || msgs[0].Kind != webhook.KindFanout {
		t.Fatalf("queue after payment: %+v", msgs)
	}
	if err := h.a.HandleDeliveryMessage(h.ctx, mustJSON(t, msgs[0])); err != nil {
		t.Fatal(err)
	}
	// The fan-out delivered twice: the second does nothing.
	if err := h.a.HandleDeliveryMessage(h.ctx, mustJSON(t, msgs[0])); err != nil {
		t.Fatal(err)
	}
	msgs = attemptMessages(t, h)
	if len(msgs) != 1 || msgs[0].Kind != webhook.KindAttempt || msgs[0].N != 1 {
		t.Fatalf("after two fan-outs: %+v", msgs)
	}
	first := mustJSON(t, msgs[0])

	// Attempt 1 delivered five times at once, then once more.
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if err := h.a.HandleDeliveryMessage(h.ctx, first); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := h.a.HandleDeliveryMessage(h.ctx, first); err != nil {
		t.Fatal(err)
	}
	id := msgs[0].DeliveryID
	d := h.delivery(id)
	if d.Attempts != 1 || len(d.Log) != 1 || d.Status != webhook.DeliveryPending {
		t.Fatalf("after duplicates of attempt 1: attempts %d, log %+v", d.Attempts, d.Log)
	}
	msgs = attemptMessages(t, h) // attempt 2 waits 1 s
	if len(msgs) != 1 || msgs[0].N != 2 {
		t.Fatalf("next attempts scheduled: %+v, want exactly attempt 2", msgs)
	}
	if posts := len(rc.events()); posts < 1 || posts > 5 {
		t.Errorf("receiver got %d POSTs of attempt 1", posts)
	}

	// The process dies after POSTing attempt 2, before recording it.
	h.a.Webhooks.Store = &failSaveOnce{Store: h.a.Webhooks.Store}
	before := len(rc.events())
	second := mustJSON(t, msgs[0])
	if err := h.a.HandleDeliveryMessage(h.ctx, second); err == nil {
		t.Fatal("the cut attempt reported success")
	}
	if err := h.a.HandleDeliveryMessage(h.ctx, second); err != nil { // SQS gives it back
		t.Fatal(err)
	}
	d = h.delivery(id)
	if d.Attempts != 2 || len(d.Log) != 2 || len(rc.events()) != before+2 {
		t.Errorf("after the cut: attempts %d, log %d, POSTs %d (want 2, 2, %d)", d.Attempts, len(d.Log), len(rc.events()), before+2)
	}
	if f, err := h.a.Webhooks.GetEndpoint(h.ctx, ep.ID); err != nil || f.ConsecutiveFailures < 2 {
		t.Errorf("endpoint failures after two failed attempts: %+v %v", f, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
