package waitroom

import (
	"context"
	"errors"
	"sync"
	"time"

	"tix/internal/ticketing"
)

// Events finds an organizer's event (the store's catalog).
type Events interface {
	GetEvent(ctx context.Context, organizerID, eventID string, env ticketing.Environment) (*ticketing.Event, error)
}

// ProtectRequest is what the organizer sets (tixctl onsale protect, the dashboard).
type ProtectRequest struct {
	EventID, OccurrenceID string
	OpensAt               time.Time
	Rate, Difficulty      int // 0: the defaults
}

// Protect protects an occurrence's on-sale of t's event: from then on its
// publishable-key holds and orders need an admission. Protecting again
// replaces the settings (opening, rate, cost).
func (s *Service) Protect(ctx context.Context, ev Events, t ticketing.Tenant, req ProtectRequest) (*Protection, error) {
	e, err := ev.GetEvent(ctx, t.OrganizerID, req.EventID, t.Environment)
	if err != nil {
		return nil, err
	}
	if req.OccurrenceID != "" && !hasOccurrence(e, req.OccurrenceID) {
		return nil, ticketing.Invalid("occurrence_id", "event %s has no occurrence %s; list its occurrences with GET /v1/events/%s", e.ID, req.OccurrenceID, e.ID)
	}
	if req.OpensAt.IsZero() {
		return nil, ticketing.Invalid("opens_at", "opens_at is required: the on-sale's opening, RFC 3339 (2026-12-01T10:00:00Z)")
	}
	if req.Rate < 0 || req.Rate > MaxRate {
		return nil, ticketing.Invalid("rate", "rate is admissions per second, 1 to %d (0: the default %d)", MaxRate, s.Settings.Rate)
	}
	if req.Difficulty < 0 || req.Difficulty > MaxDifficulty {
		return nil, ticketing.Invalid("difficulty", "difficulty is the proof of work's leading zero bits, 1 to %d (0: the default %d)", MaxDifficulty, s.Settings.Difficulty)
	}
	p := Protection{EventID: e.ID, OccurrenceID: req.OccurrenceID, Tenant: t, OpensAt: req.OpensAt.UTC().Truncate(time.Second),
		Rate: req.Rate, Difficulty: req.Difficulty, CreatedAt: s.Clock.Now()}
	if p.Rate == 0 {
		p.Rate = s.Settings.Rate
	}
	if p.Difficulty == 0 {
		p.Difficulty = s.Settings.Difficulty
	}
	if err := s.Store.PutProtection(ctx, p); err != nil {
		if errors.Is(err, ticketing.ErrStateChanged) {
			return nil, ticketing.NotFound("event")
		}
		return nil, err
	}
	s.prot.drop(e.ID)
	return &p, nil
}

// ProtectEvent is Protect over s.Events (the dashboard's form).
func (s *Service) ProtectEvent(ctx context.Context, t ticketing.Tenant, req ProtectRequest) (*Protection, error) {
	return s.Protect(ctx, s.Events, t, req)
}

func hasOccurrence(e *ticketing.Event, id string) bool {
	for _, o := range e.Occurrences {
		if o.ID == id {
			return true
		}
	}
	return false
}

// Protection reads t's protection of eventID (not_found when the event has
// none or it is another tenant's).
func (s *Service) Protection(ctx context.Context, t ticketing.Tenant, eventID string) (*Protection, error) {
	p, err := s.protection(ctx, eventID)
	if err != nil {
		return nil, err
	}
	if p == nil || p.Tenant != t {
		return nil, ticketing.NotFound("waiting room: event " + eventID + " has no protected on-sale;")
	}
	return p, nil
}

// protection reads eventID's protection through the process's cache (nil
// when none): a protection takes effect in other processes within
// protectionTTL.
func (s *Service) protection(ctx context.Context, eventID string) (*Protection, error) {
	now := s.Clock.Now()
	if p, ok := s.prot.get(eventID, now); ok {
		return p, nil
	}
	// One read per process at a time: the requests that missed together
	// wait for it rather than each reading the event's partition.
	s.prot.fill.Lock()
	defer s.prot.fill.Unlock()
	if p, ok := s.prot.get(eventID, now); ok {
		return p, nil
	}
	p, err := s.Store.GetProtection(ctx, eventID)
	if errors.Is(err, ticketing.ErrNotFound) {
		p, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.prot.put(eventID, p, now)
	return p, nil
}

// protectionTTL is how long a process reuses an event's protection it read
// (or that it has none).
const protectionTTL = 5 * time.Second

type protectionCache struct {
	mu   sync.Mutex
	fill sync.Mutex // held while a miss is read
	m    map[string]cachedProtection
}

type cachedProtection struct {
	p  *Protection
	at time.Time
}

func (c *protectionCache) get(id string, now time.Time) (*Protection, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || now.Sub(e.at) >= protectionTTL || now.Before(e.at) {
		return nil, false
	}
	return e.p, true
}

func (c *protectionCache) put(id string, p *Protection, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10000 {
		c.m = map[string]cachedProtection{}
	}
	c.m[id] = cachedProtection{p: p, at: now}
}

func (c *protectionCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}
