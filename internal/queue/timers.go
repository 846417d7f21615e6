package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"tix/internal/ticketing"
)

// Timers is the ticketing.Scheduler over the timers queue. A queue delays a
// message by MaxDelay at most, so a timer due later arrives early and is sent
// on again by HandleTimer: one hop per MaxDelay.
type Timers struct {
	clock func() time.Time
	// send is Client.Send; tests replace it to see the delay asked for.
	send func(ctx context.Context, queueName string, body []byte, delay time.Duration) error
}

var _ ticketing.Scheduler = (*Timers)(nil)

// NewTimers returns the scheduler sending to c's timers queue; clock nil is
// the system clock.
func NewTimers(c *Client, clock func() time.Time) *Timers {
	if clock == nil {
		clock = time.Now
	}
	return &Timers{clock: clock, send: c.Send}
}

// timerDelay is how long the queue holds a timer: until Due, at most MaxDelay,
// at least 0.
func timerDelay(due, now time.Time) time.Duration {
	return min(MaxDelay, max(0, due.Sub(now)))
}

// Schedule sends t to the timers queue, delayed until t.Due or MaxDelay,
// whichever comes first.
func (s *Timers) Schedule(ctx context.Context, t ticketing.Timer) error {
	if err := validTimer(t); err != nil {
		return fmt.Errorf("schedule timer: %w", err)
	}
	body, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("schedule timer %s %s: %w", t.Kind, t.OrderID, err)
	}
	if err := s.send(ctx, TimersQueue, body, timerDelay(t.Due, s.clock())); err != nil {
		return fmt.Errorf("schedule timer %s %s: %w", t.Kind, t.OrderID, err)
	}
	return nil
}

// ErrMalformedTimer marks a timers-queue message that is not a timer: retrying
// cannot help, and the message is left to go to the DLQ.
var ErrMalformedTimer = errors.New("malformed timer message")

func validTimer(t ticketing.Timer) error {
	switch {
	case t.Kind == "":
		return fmt.Errorf("%w: no kind", ErrMalformedTimer)
	case t.OrderID == "":
		return fmt.Errorf("%w: no order_id", ErrMalformedTimer)
	case t.Due.IsZero():
		return fmt.Errorf("%w: no due time", ErrMalformedTimer)
	}
	return nil
}

// timerSlack is how early a timer may arrive and still be handled.
const timerSlack = time.Second

// HandleTimer handles one timers-queue message body. A timer that arrived
// more than a second before Due (it had to wait longer than one queue delay)
// is sent on with sched and not handled; a due one is handed to handle. A body
// that is not a timer returns an error wrapping ErrMalformedTimer.
func HandleTimer(ctx context.Context, body []byte, now time.Time, sched ticketing.Scheduler, handle func(context.Context, ticketing.Timer) error) error {
	var t ticketing.Timer
	if err := json.Unmarshal(body, &t); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedTimer, err)
	}
	if err := validTimer(t); err != nil {
		return err
	}
	if t.Due.After(now.Add(timerSlack)) {
		if err := sched.Schedule(ctx, t); err != nil {
			return fmt.Errorf("send timer %s %s on toward %s: %w", t.Kind, t.OrderID, t.Due.Format(time.RFC3339), err)
		}
		return nil
	}
	return handle(ctx, t)
}
