package webhook

import (
	"context"
	"time"

	"tix/internal/ticketing"
)

// subscribedTTL is how long Subscribed answers from memory: an endpoint
// that subscribes to an opt-in type gets its events within that.
const subscribedTTL = 30 * time.Second

type subKey struct {
	t   ticketing.Tenant
	typ string
}

type subEntry struct {
	want  bool
	until time.Time
}

// Subscribed reports whether the tenant has an endpoint receiving events of
// type typ (ticketing.CheckInWebhooks), from a cache kept subscribedTTL,
// so that a door writes a ticket.checked_in event only when someone wants it.
func (s *Service) Subscribed(ctx context.Context, t ticketing.Tenant, typ string) (bool, error) {
	now, k := time.Now(), subKey{t, typ}
	s.subMu.Lock()
	e, ok := s.subs[k]
	s.subMu.Unlock()
	if ok && now.Before(e.until) {
		return e.want, nil
	}
	eps, err := s.Store.ListEndpoints(ctx, t.OrganizerID, t.Environment)
	if err != nil {
		return false, err
	}
	want := false
	for _, ep := range eps {
		want = want || (ep.Receiving() && ep.Subscribes(typ))
	}
	s.subMu.Lock()
	if s.subs == nil || len(s.subs) >= 10000 {
		s.subs = map[subKey]subEntry{}
	}
	s.subs[k] = subEntry{want: want, until: now.Add(subscribedTTL)}
	s.subMu.Unlock()
	return want, nil
}
