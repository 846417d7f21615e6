package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// testClient opens a client on fauxqs with fresh queues, deleted at the end.
func testClient(t *testing.T) *Client {
	t.Helper()
	ctx := context.Background()
	c, err := Open(ctx, "us-east-1", testenv.SQSEndpoint(t), testenv.UniqueName("tix-test"))
	if err != nil {
		t.Fatal(err)
	}
	urls, err := c.EnsureQueues(ctx)
	if err != nil {
		t.Fatalf("EnsureQueues (is fauxqs running at %s?): %v", testenv.SQSEndpoint(t), err)
	}
	t.Cleanup(func() {
		for _, u := range urls {
			_, _ = c.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		}
	})
	return c
}

// queued counts a queue's messages, visible or in flight (not yet deleted).
func queued(t *testing.T, c *Client, name string) int {
	t.Helper()
	n, err := c.Depth(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// receiveWithin polls until a message arrives or d passes.
func receiveWithin(t *testing.T, c *Client, name string, d time.Duration) []Message {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		msgs, err := c.Receive(context.Background(), name, 10, time.Second)
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		if len(msgs) > 0 {
			return msgs
		}
	}
	return nil
}

func TestSendReceiveDelete_RoundTrip(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	body := []byte(`{"hello":"мир"}`)
	if err := c.Send(ctx, DeliveriesQueue, body, 0); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := receiveWithin(t, c, DeliveriesQueue, 3*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("received %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if !bytes.Equal(m.Body, body) || m.ID == "" || m.ReceiptHandle == "" || m.ReceiveCount != 1 {
		t.Errorf("received %+v, want body %s, an id, a receipt handle and ReceiveCount 1", m, body)
	}
	if n := queued(t, c, DeliveriesQueue); n != 1 {
		t.Errorf("before Delete the queue holds %d messages, want 1 (in flight)", n)
	}
	if err := c.Delete(ctx, DeliveriesQueue, m.ReceiptHandle); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if n := queued(t, c, DeliveriesQueue); n != 0 {
		t.Errorf("after Delete the queue holds %d messages, want 0", n)
	}
}

func TestClient_UnknownQueueIsAnError(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	if err := c.Send(ctx, "nope", []byte("x"), 0); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("Send to an unknown name: err = %v, want ErrUnknownQueue", err)
	}
	if _, err := c.Receive(ctx, "nope", 1, 0); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("Receive from an unknown name: err = %v, want ErrUnknownQueue", err)
	}
	if err := c.Consume(ctx, "nope", nil); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("Consume an unknown name: err = %v, want ErrUnknownQueue", err)
	}
	// A tix queue name under a prefix whose queues were never created.
	bare, err := Open(ctx, "us-east-1", testenv.SQSEndpoint(t), testenv.UniqueName("tix-test-none"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.Send(ctx, TimersQueue, []byte("x"), 0); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("Send to a queue that does not exist: err = %v, want ErrUnknownQueue", err)
	}
	if err := c.Send(ctx, DeliveriesQueue, []byte{0xff, 0xfe}, 0); err == nil {
		t.Error("Send of a body that is not UTF-8: want an error")
	}
}

func TestClient_ResolvesQueueURLsOnceAndConcurrently(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	// A second client on the same queues, with nothing cached.
	fresh, err := Open(ctx, "us-east-1", testenv.SQSEndpoint(t), strings.TrimSuffix(c.QueueName(""), "-"))
	if err != nil {
		t.Fatal(err)
	}
	rec := record(fresh)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := fresh.Send(ctx, DeliveriesQueue, []byte("x"), 0); err != nil {
				t.Errorf("Send: %v", err)
			}
		})
	}
	wg.Wait()
	if n := rec.calls("GetQueueUrl"); n != 1 {
		t.Errorf("8 concurrent sends made %d GetQueueUrl calls, want 1", n)
	}
	want, _ := c.url(ctx, DeliveriesQueue)
	if got, _ := fresh.url(ctx, DeliveriesQueue); got != want {
		t.Errorf("resolved url %q, want %q", got, want)
	}
	if n := rec.calls("SendMessage"); n != 8 {
		t.Errorf("%d SendMessage calls, want 8", n)
	}
	// EnsureQueues fills the cache: the first client never asked.
	if n := record(c).calls("GetQueueUrl"); n != 0 {
		t.Errorf("after EnsureQueues: %d GetQueueUrl calls", n)
	}
	if err := c.Send(ctx, TimersQueue, []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
}

func TestSend_DelayedMessageArrivesLater(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	start := time.Now()
	if err := c.Send(ctx, DeliveriesQueue, []byte("later"), 2*time.Second); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if msgs, err := c.Receive(ctx, DeliveriesQueue, 10, 0); err != nil || len(msgs) != 0 {
		t.Fatalf("immediately after Send: received %d messages (%v), want none for a 2 s delay", len(msgs), err)
	}
	if n := queued(t, c, DeliveriesQueue); n != 1 {
		t.Errorf("Depth counts %d messages while one is delayed, want 1", n)
	}
	msgs := receiveWithin(t, c, DeliveriesQueue, 5*time.Second)
	if len(msgs) != 1 || string(msgs[0].Body) != "later" {
		t.Fatalf("received %+v, want the delayed message", msgs)
	}
	if waited := time.Since(start); waited < 1500*time.Millisecond {
		t.Errorf("delayed message arrived after %v, want about 2 s", waited)
	}
}

// recorder records the requests the SQS client sends.
type recorder struct {
	inner   sqs.HTTPClient
	mu      sync.Mutex
	sent    []string       // request bodies
	actions map[string]int // X-Amz-Target actions (AmazonSQS.SendMessage) by count
}

// record makes c's SQS client record its requests.
func record(c *Client) *recorder {
	rec := &recorder{actions: map[string]int{}}
	c.sqs = sqs.New(c.sqs.Options(), func(o *sqs.Options) { rec.inner = o.HTTPClient; o.HTTPClient = rec })
	return rec
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	var b []byte
	if req.Body != nil {
		var err error
		if b, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	r.mu.Lock()
	r.sent = append(r.sent, string(b))
	r.actions[strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "AmazonSQS.")]++
	r.mu.Unlock()
	return r.inner.Do(req)
}

func (r *recorder) calls(action string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.actions[action]
}

// The adapter never asks for more than MaxDelay, though fauxqs would take it.
func TestSend_ClampsDelayOnTheWire(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	rec := record(c)
	for _, tc := range []struct {
		delay time.Duration
		want  int
	}{{2 * time.Hour, 900}, {MaxDelay + time.Millisecond, 900}, {1200 * time.Millisecond, 2}} {
		rec.sent = nil
		if err := c.Send(ctx, DeliveriesQueue, []byte("x"), tc.delay); err != nil {
			t.Fatalf("Send(%v): %v", tc.delay, err)
		}
		var req struct{ DelaySeconds int }
		if len(rec.sent) != 1 || json.Unmarshal([]byte(rec.sent[0]), &req) != nil {
			t.Fatalf("Send(%v) sent %q, want one JSON request", tc.delay, rec.sent)
		}
		if req.DelaySeconds != tc.want {
			t.Errorf("Send(%v) asked for DelaySeconds %d, want %d", tc.delay, req.DelaySeconds, tc.want)
		}
	}
}

func TestDelaySeconds(t *testing.T) {
	for d, want := range map[time.Duration]int32{
		-time.Minute:                      0,
		0:                                 0,
		time.Nanosecond:                   1,
		time.Second:                       1,
		1500 * time.Millisecond:           2,
		899*time.Second + 1:               900,
		MaxDelay:                          900,
		MaxDelay + time.Nanosecond:        900,
		2 * time.Hour:                     900,
		time.Duration(1<<63 - 1):          900,
		time.Duration(-1 << 63):           0,
		899*time.Second - time.Nanosecond: 899,
	} {
		if got := delaySeconds(d); got != want {
			t.Errorf("delaySeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

type sentTimer struct {
	queue string
	timer ticketing.Timer
	delay time.Duration
}

// capture replaces a Timers' sender with one that records what it was asked.
func capture(s *Timers) *[]sentTimer {
	var got []sentTimer
	s.send = func(_ context.Context, queueName string, body []byte, delay time.Duration) error {
		var tm ticketing.Timer
		if err := json.Unmarshal(body, &tm); err != nil {
			return err
		}
		got = append(got, sentTimer{queueName, tm, delay})
		return nil
	}
	return &got
}

func TestTimers_ScheduleDelaysAtMostMaxDelay(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	s := NewTimers(&Client{}, func() time.Time { return now })
	got := capture(s)
	for _, tc := range []struct {
		due  time.Time
		want time.Duration
	}{
		{now.Add(2 * time.Hour), MaxDelay},
		{now.Add(30 * time.Second), 30 * time.Second},
		{now.Add(-time.Minute), 0},
	} {
		*got = nil
		tm := ticketing.Timer{Kind: ticketing.TimerOrderExpiry, OrderID: "ord-1", Due: tc.due}
		if err := s.Schedule(context.Background(), tm); err != nil {
			t.Fatalf("Schedule(due %v): %v", tc.due, err)
		}
		if len(*got) != 1 {
			t.Fatalf("Schedule sent %d messages, want 1", len(*got))
		}
		sent := (*got)[0]
		if sent.queue != TimersQueue || sent.delay != tc.want || sent.timer != tm {
			t.Errorf("Schedule(due in %v) sent %+v, want %+v to %s with delay %v", tc.due.Sub(now), sent, tm, TimersQueue, tc.want)
		}
	}
	if err := s.Schedule(context.Background(), ticketing.Timer{Kind: "x", Due: now}); !errors.Is(err, ErrMalformedTimer) {
		t.Errorf("Schedule of a timer without an order: err = %v, want ErrMalformedTimer", err)
	}
}

func TestTimers_ScheduleSendsTheTimerToTheTimersQueue(t *testing.T) {
	c := testClient(t)
	s := NewTimers(c, nil)
	tm := ticketing.Timer{Kind: ticketing.TimerRefundSettle, OrderID: "ord-2", Due: time.Now().Add(-time.Second).UTC().Round(0)}
	if err := s.Schedule(context.Background(), tm); err != nil {
		t.Fatalf("Schedule: %v", err)
	}
	msgs := receiveWithin(t, c, TimersQueue, 3*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("timers queue gave %d messages, want 1", len(msgs))
	}
	var got ticketing.Timer
	if err := json.Unmarshal(msgs[0].Body, &got); err != nil || got.Kind != tm.Kind || got.OrderID != tm.OrderID || !got.Due.Equal(tm.Due) {
		t.Errorf("timers queue gave %s (%v), want %+v", msgs[0].Body, err, tm)
	}
}

// fakeScheduler records the timers sent on.
type fakeScheduler struct {
	got []ticketing.Timer
	err error
}

func (f *fakeScheduler) Schedule(_ context.Context, t ticketing.Timer) error {
	f.got = append(f.got, t)
	return f.err
}

func TestHandleTimer(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	body := func(due time.Time) []byte {
		b, _ := json.Marshal(ticketing.Timer{Kind: ticketing.TimerOrderExpiry, OrderID: "ord-1", Due: due})
		return b
	}
	run := func(b []byte, sched *fakeScheduler, handleErr error) (handled []ticketing.Timer, err error) {
		err = HandleTimer(ctx, b, now, sched, func(_ context.Context, tm ticketing.Timer) error {
			handled = append(handled, tm)
			return handleErr
		})
		return handled, err
	}

	t.Run("an early timer is sent on, not handled", func(t *testing.T) {
		due := now.Add(2 * time.Hour)
		sched := &fakeScheduler{}
		handled, err := run(body(due), sched, nil)
		if err != nil || len(handled) != 0 {
			t.Fatalf("handled %v, err %v; want nothing handled and no error", handled, err)
		}
		if len(sched.got) != 1 || !sched.got[0].Due.Equal(due) || sched.got[0].OrderID != "ord-1" {
			t.Errorf("sent on %+v, want the same timer due %v", sched.got, due)
		}
	})
	t.Run("a failed hop is an error, so the message comes back", func(t *testing.T) {
		down := errors.New("queue down")
		if _, err := run(body(now.Add(time.Hour)), &fakeScheduler{err: down}, nil); !errors.Is(err, down) {
			t.Errorf("err = %v, want the scheduler's error", err)
		}
	})
	for name, due := range map[string]time.Time{
		"a due timer is handled":             now,
		"a timer within a second is handled": now.Add(time.Second),
		"a late timer is handled":            now.Add(-time.Hour),
	} {
		t.Run(name, func(t *testing.T) {
			sched := &fakeScheduler{}
			handled, err := run(body(due), sched, nil)
			if err != nil || len(handled) != 1 || !handled[0].Due.Equal(due) || len(sched.got) != 0 {
				t.Errorf("handled %v, sent on %v, err %v; want it handled once, not sent on", handled, sched.got, err)
			}
		})
	}
	t.Run("the handler's error is returned", func(t *testing.T) {
		boom := errors.New("boom")
		if _, err := run(body(now), &fakeScheduler{}, boom); !errors.Is(err, boom) {
			t.Errorf("err = %v, want the handler's error", err)
		}
	})
	for name, b := range map[string]string{
		"not JSON":   `expire ord-1`,
		"wrong type": `{"kind":"order.expire","order_id":"ord-1","due":42}`,
		"no kind":    `{"order_id":"ord-1","due":"2030-01-01T12:00:00Z"}`,
		"no order":   `{"kind":"order.expire","due":"2030-01-01T12:00:00Z"}`,
		"no due":     `{"kind":"order.expire","order_id":"ord-1"}`,
	} {
		t.Run("malformed: "+name, func(t *testing.T) {
			sched := &fakeScheduler{}
			handled, err := run([]byte(b), sched, nil)
			if !errors.Is(err, ErrMalformedTimer) || !strings.Contains(err.Error(), "malformed") {
				t.Errorf("err = %v, want ErrMalformedTimer", err)
			}
			if len(handled) != 0 || len(sched.got) != 0 {
				t.Errorf("malformed body was handled %v or sent on %v", handled, sched.got)
			}
		})
	}
}

func TestConsume_DeletesHandledMessagesAndLeavesFailedOnes(t *testing.T) {
	c := testClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// A short visibility timeout so that a failed message comes back quickly.
	u, _ := c.url(ctx, DeliveriesQueue)
	if _, err := c.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
		QueueUrl: aws.String(u), Attributes: map[string]string{"VisibilityTimeout": "1"},
	}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"ok-1", "ok-2", "fail"} {
		if err := c.Send(ctx, DeliveriesQueue, []byte(b), 0); err != nil {
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	seen := map[string][]int{} // body -> receive counts
	failedTwice := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- c.Consume(ctx, DeliveriesQueue, func(_ context.Context, m Message) error {
			mu.Lock()
			defer mu.Unlock()
			seen[string(m.Body)] = append(seen[string(m.Body)], m.ReceiveCount)
			if string(m.Body) != "fail" {
				return nil
			}
			if len(seen["fail"]) == 2 {
				close(failedTwice)
			}
			return errors.New("cannot handle this one")
		})
	}()
	select {
	case <-failedTwice:
	case <-ctx.Done():
		t.Fatalf("the failed message did not come back: seen %v", seen)
	}
	// The handled ones are deleted: the queue holds only the failed one, so
	// nothing else can come back.
	testenv.WaitFor(t, 5*time.Second, "the handled messages deleted", func() bool { return queued(t, c, DeliveriesQueue) == 1 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Consume returned %v, want nil when its context ends", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Consume did not return after its context ended")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen["ok-1"]) != 1 || len(seen["ok-2"]) != 1 {
		t.Errorf("handled messages seen %v, want each once (deleted)", seen)
	}
	if got := seen["fail"]; len(got) < 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("failed message seen with receive counts %v, want 1 then 2", got)
	}
	if n := queued(t, c, DeliveriesQueue); n != 1 {
		t.Errorf("queue holds %d messages after Consume, want 1 (the failed one)", n)
	}
}
