package emailjobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"tix/internal/clock"
	"tix/internal/emailsend"
	"tix/internal/ticketing"
)

// Settings are the consumer's retry schedule, lease and sweep.
type Settings struct {
	// Backoff is the wait before attempt n+1 after attempt n failed; its
	// length+1 is the number of attempts before a job is failed.
	Backoff []time.Duration
	// Lease is how long a claimed job is the claimant's: after it, the sweep
	// takes the job for lost (the consumer died) and it is sent again.
	Lease time.Duration
	// SweepGrace is how late a pending job's message may be before the sweep
	// sends another.
	SweepGrace time.Duration
	SweepBatch int
	// RecipientDailyCap is how many emails of an order (tickets, refund,
	// resend) one address gets from one organizer in a UTC day, live and test
	// together; more are skipped (ReasonRecipientDailyCap). 0: no cap.
	RecipientDailyCap int
}

// DefaultRecipientDailyCap is Settings.RecipientDailyCap's default
// (TIX_MAIL_RECIPIENT_DAILY_CAP).
const DefaultRecipientDailyCap = 20

// DefaultSettings: 5 attempts over about 40 minutes.
var DefaultSettings = Settings{
	Backoff:           []time.Duration{30 * time.Second, 2 * time.Minute, 8 * time.Minute, 30 * time.Minute},
	Lease:             2 * time.Minute,
	SweepGrace:        time.Minute,
	SweepBatch:        100,
	RecipientDailyCap: DefaultRecipientDailyCap,
}

// Service writes, sends and sweeps email jobs.
type Service struct {
	Store    Store
	Orders   OrderReader // the order an email is about
	Events   EventReader // the event it is for
	Queue    Queue       // nil: jobs are sent by the sweep (tixctl)
	Sender   Sender
	Renderer Renderer
	// Codes signs the tickets' codes the email shows (nil: the unsigned v1
	// payload, for tests of the pipeline alone).
	Codes    TicketCoder
	Clock    clock.Clock
	Settings Settings
}

// TicketCoder signs a paid order's codes: the order's and one per ticket
// (ticketing.TicketKeys).
type TicketCoder interface {
	TicketCodes(ctx context.Context, o *ticketing.Order) (string, map[string]string, error)
}

func (s *Service) now() time.Time { return s.Clock.Now().UTC() }

// hopSlack is how early a message may arrive and still be handled.
const hopSlack = time.Second

func (s *Service) newJob(subject, name string, kind Kind, org string, env ticketing.Environment, now time.Time) *Job {
	return &Job{Subject: subject, Name: name, Kind: kind, OrganizerID: org, Environment: env,
		Status: StatusPending, MaxAttempts: len(s.Settings.Backoff) + 1, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}
}

// JobsFor returns the jobs an outbox event owes, to be written in the
// event's dispatch transaction (each only if absent): order.paid the tickets,
// order.refunded the refund confirmation, ticket.transferred the new
// order's ticket.
func (s *Service) JobsFor(ev *ticketing.OrderEvent, now time.Time) []*Job {
	var kind Kind
	switch ev.Type {
	case ticketing.EventOrderPaid, ticketing.EventTicketTransferred:
		kind = KindTickets // a transfer's: the new order's ticket, to its recipient
	case ticketing.EventOrderRefunded:
		kind = KindRefund
	default:
		return nil
	}
	j := s.newJob(ev.Order.ID, string(kind), kind, ev.OrganizerID, ev.Environment, now)
	j.OrderID = ev.Order.ID
	return []*Job{j}
}

// Enqueue sends each job's message; a failure is left to the sweep.
func (s *Service) Enqueue(ctx context.Context, jobs []*Job) {
	for _, j := range jobs {
		s.enqueue(ctx, j)
	}
}

func (s *Service) enqueue(ctx context.Context, j *Job) {
	if s.Queue == nil {
		return
	}
	m := Message{Kind: KindEmail, JobID: j.ID(), Due: j.NextAttemptAt}
	if err := s.Queue.SendEmail(ctx, m, j.NextAttemptAt.Sub(s.now())); err != nil {
		slog.WarnContext(ctx, "enqueue email job; the sweep will send it", "job_id", j.ID(), "error", err)
	}
}

// save writes j with its due time in the sweep's index.
func (s *Service) save(ctx context.Context, j *Job) error {
	due, ok := j.DueAt(s.Settings.SweepGrace)
	return s.Store.SaveJob(ctx, j, due, ok)
}

// Handle runs one email message: claim the job (pending, or sending with an
// expired lease → sending under a new lease, conditional on its version),
// compose, send, record. A duplicate or stale message changes nothing.
//
// The one duplicate: a consumer that dies (or fails to record) after the
// provider accepted the message leaves the job sending; when its lease ends,
// the sweep sends it again. Each such crash may send one more copy.
func (s *Service) Handle(ctx context.Context, m Message) error {
	now := s.now()
	if m.Due.After(now.Add(hopSlack)) && s.Queue != nil {
		return s.Queue.SendEmail(ctx, m, m.Due.Sub(now))
	}
	j, err := s.Store.GetJob(ctx, m.JobID)
	if errors.Is(err, ErrNotFound) {
		slog.WarnContext(ctx, "email message for an unknown job", "job_id", m.JobID)
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case j.Status.Final():
		return nil
	case j.Status == StatusSending && j.LeaseUntil != nil && j.LeaseUntil.After(now):
		return nil // claimed by another consumer; the sweep takes it if its lease ends
	case j.Status == StatusPending && j.NextAttemptAt.After(now.Add(hopSlack)):
		return nil // a stale message: the retry's own message is queued
	}
	lease := now.Add(s.Settings.Lease)
	j.Status, j.LeaseUntil, j.UpdatedAt = StatusSending, &lease, now
	j.Attempts++
	if err := s.save(ctx, j); err != nil {
		if errors.Is(err, ErrStateChanged) {
			return nil // another consumer claimed it first
		}
		return err
	}
	msg, final, err := s.compose(ctx, j)
	var id string
	if final == "" && err == nil {
		id, err = s.Sender.Send(ctx, msg)
	}
	s.outcome(j, final, id, err, s.now())
	if err := s.save(ctx, j); err != nil {
		// Sent but not recorded: the job stays sending until its lease ends,
		// then the sweep sends it once more (the documented duplicate).
		return fmt.Errorf("record email job %s: %w", j.ID(), err)
	}
	if j.Status == StatusPending {
		s.enqueue(ctx, j)
	}
	if j.Status != StatusSent {
		slog.WarnContext(ctx, "email not sent", "job_id", j.ID(), "status", j.Status, "attempt", j.Attempts, "error", j.LastError)
	}
	return nil
}

// outcome records a claimed job's result: sent, final at once (rejected,
// suppressed, skipped or failed without retry), or a failed attempt, retried
// after its backoff until MaxAttempts.
func (s *Service) outcome(j *Job, final Status, id string, err error, now time.Time) {
	j.LeaseUntil, j.UpdatedAt = nil, now
	var why skip
	switch {
	case final != "" && errors.As(err, &why):
		j.Status, j.Reason = final, string(why)
	case final != "":
		j.Status = final
		if err != nil {
			j.LastError = redact(err.Error())
		}
	case err == nil:
		j.Status, j.ProviderID, j.SentAt, j.LastError = StatusSent, id, &now, ""
	case errors.Is(err, emailsend.ErrRejected):
		j.Status, j.LastError = StatusRejected, redact(err.Error())
	case j.Attempts >= j.MaxAttempts:
		j.Status, j.LastError = StatusFailed, redact(err.Error())
	default:
		j.Status, j.LastError = StatusPending, redact(err.Error())
		j.NextAttemptAt = now.Add(s.Settings.Backoff[min(j.Attempts, len(s.Settings.Backoff))-1])
	}
	if j.Status.Final() && j.Alert != nil && accountCauses[j.Alert.Cause] {
		j.Alert.URL = "" // a single-use link is kept no longer than its email needs it
	}
}

var addrLike = regexp.MustCompile(`[^\s<>"',;:]+@[^\s<>"',;]+`)

// redact keeps an error's text without any address in it, at most 300 bytes.
func redact(s string) string {
	s = addrLike.ReplaceAllString(s, "<address>")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// ValidAddress reports whether addr is one plain address (no display name,
// no list, nothing but the address).
func ValidAddress(addr string) bool {
	a, err := mail.ParseAddress(addr)
	return err == nil && a.Address == addr && a.Name == "" && strings.Count(addr, "@") == 1
}

// Sweep sends again the jobs whose message was lost or whose consumer died:
// pending jobs overdue by SweepGrace and sending jobs past their lease. Each
// is claimed for the sweep by moving its due time (conditional on its
// version), so overlapping sweeps send one message.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	now := s.now()
	jobs, err := s.Store.OverdueJobs(ctx, now, s.Settings.SweepBatch)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, j := range jobs {
		if err := s.Store.SaveJob(ctx, j, now.Add(s.Settings.SweepGrace+s.Settings.Lease), true); err != nil {
			if !errors.Is(err, ErrStateChanged) {
				errs = append(errs, fmt.Errorf("claim email job %s: %w", j.ID(), err))
			}
			continue
		}
		if s.Queue == nil {
			continue
		}
		if err := s.Queue.SendEmail(ctx, Message{Kind: KindEmail, JobID: j.ID(), Due: now}, 0); err != nil {
			errs = append(errs, fmt.Errorf("enqueue email job %s: %w", j.ID(), err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
