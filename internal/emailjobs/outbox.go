package emailjobs

import (
	"context"
	"time"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The pipeline follows the order outbox as one of its subscribers: the
// webhook fan-out writes the jobs an event owes in the event's dispatch
// transaction, then hands them back to be queued. The webhook package knows
// nothing of email.
var (
	_ webhook.Subscriber  = (*Service)(nil)
	_ webhook.OwnerAlerts = (*Service)(nil)
)

// Owed is what ev owes the buyer (JobsFor), as the outbox's records.
func (s *Service) Owed(ev *ticketing.OrderEvent, now time.Time) []webhook.Record {
	jobs := s.JobsFor(ev, now)
	if len(jobs) == 0 {
		return nil
	}
	rs := make([]webhook.Record, len(jobs))
	for i, j := range jobs {
		rs[i] = j
	}
	return rs
}

// Dispatched queues the messages of the jobs an event's dispatch wrote.
func (s *Service) Dispatched(ctx context.Context, records []webhook.Record) {
	jobs := make([]*Job, 0, len(records))
	for _, r := range records {
		if j, ok := r.(*Job); ok { // only its own records come back
			jobs = append(jobs, j)
		}
	}
	s.Enqueue(ctx, jobs)
}
