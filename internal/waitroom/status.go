package waitroom

import (
	"context"
	"time"

	"tix/internal/ticketing"
)

// Queue states of a status.
const (
	StateWaiting  = "waiting"  // before the opening
	StateQueued   = "queued"   // after it, not admitted yet
	StateAdmitted = "admitted" // the admission is in the status
	StateExpired  = "expired"  // the admission's time ran out: join again
)

// Status is a visitor's place: the position (1 = first), how many places
// the queue has admitted, the estimated wait and, once admitted, the admission.
type Status struct {
	State           string
	Position        int
	AdmittedThrough int
	EstimatedWait   time.Duration
	OpensAt         time.Time
	Rate            int
	// Final: the position no longer changes (its bucket's counts are final).
	Final     bool
	Admission *IssuedAdmission
	// PollAfter is when asking again is useful.
	PollAfter time.Duration
}

// IssuedAdmission is an admission token and its validity.
type IssuedAdmission struct {
	Token                string
	ValidFrom, ExpiresAt time.Time
}

// QueueStatus answers a visitor's status from its queue token, read on
// network ip. Nothing is written, and nothing read but the join counters,
// through the process's cache.
func (s *Service) QueueStatus(ctx context.Context, t ticketing.Tenant, eventID, token, ip string) (*Status, error) {
	p, err := s.Protection(ctx, t, eventID)
	if err != nil {
		return nil, err
	}
	q, err := s.openQueueToken(p, token, ip)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	c, err := s.snapshot(ctx, p, now)
	if err != nil {
		return nil, err
	}
	st := &Status{OpensAt: p.OpensAt, Rate: p.Rate}
	pos, final := c.position(q)
	st.Position, st.Final = pos, final
	if now.Before(p.OpensAt) {
		st.State = StateWaiting
		st.EstimatedWait = p.OpensAt.Sub(now) + perRate(pos, p.Rate)
		st.PollAfter = clampPoll(p.OpensAt.Sub(now) / 2)
		return st, nil
	}
	st.AdmittedThrough = int(float64(p.Rate) * now.Sub(p.OpensAt).Seconds())
	finalAt := s.finalAt(p, q.Bucket)
	release := maxTime(p.OpensAt.Add(perRate(pos, p.Rate)), finalAt)
	if !final || now.Before(release) {
		st.State = StateQueued
		st.EstimatedWait = maxTime(release, now).Sub(now)
		st.PollAfter = clampPoll(st.EstimatedWait / 2)
		return st, nil
	}
	exp := release.Add(s.Settings.AdmissionTTL)
	if !now.Before(exp) {
		st.State = StateExpired
		return st, nil
	}
	st.State = StateAdmitted
	a := admissionClaims{ID: admissionID(s.sig, q.ID), Event: p.EventID, Net: q.Net, From: release.UnixMilli(), Exp: exp.UnixMilli()}
	st.Admission = &IssuedAdmission{Token: s.sig.sign(kindAdmission, a), ValidFrom: release, ExpiresAt: time.UnixMilli(a.Exp).UTC()}
	st.PollAfter = s.Settings.AdmissionTTL
	return st, nil
}

func (s *Service) openQueueToken(p *Protection, token, ip string) (*queueClaims, error) {
	var q queueClaims
	if !s.sig.open(kindQueue, token, &q) || q.Event != p.EventID {
		return nil, ticketing.Invalid("token", "token is not a queue token of this event; join with POST /v1/queue/%s/join", p.EventID)
	}
	if s.Clock.Now().UnixMilli() >= q.Exp {
		return nil, ticketing.Invalid("token", "the queue token expired; join again with POST /v1/queue/%s/join", p.EventID)
	}
	if q.Net != Network(ip) {
		return nil, ticketing.Errorf(ticketing.CodeForbidden, "this queue token was given to another network; join the queue from this device")
	}
	return &q, nil
}

// finalAt is when bucket b's counts are final: its end and the settle time.
func (s *Service) finalAt(p *Protection, b int) time.Time {
	return p.OpensAt.Add(time.Duration(b)*s.Settings.Bucket + s.Settings.Settle)
}

// perRate is how long the queue takes to admit pos places at rate a second.
func perRate(pos, rate int) time.Duration {
	return time.Duration(float64(pos) / float64(rate) * float64(time.Second))
}

func clampPoll(d time.Duration) time.Duration {
	return min(max(d, 2*time.Second), 30*time.Second).Truncate(time.Second)
}
