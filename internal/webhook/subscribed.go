package webhook

import (
	"context"
	"sync"
	"time"

	"tix/internal/ticketing"
)

// subscribedTTL is how long Subscribed answers from memory: an endpoint
// that subscribes to an opt-in type gets its events within that.
const subscribedTTL = 30 * time.Second

type subKey struct {
	store Store // the cache is shared by the services of one store
	t     ticketing.Tenant
	typ   string
}

// subscribed is Subscribed's cache (package-wide: a Service is a value its
// users copy).
var subscribed struct {
	sync.Mutex
	m map[subKey]subEntry
}

type subEntry struct {
	want  bool
	until time.Time
}

// Subscribed reports whether the tenant has an endpoint receiving events of
// type typ (ticketing.CheckInWebhooks), from a cache kept subscribedTTL,
// so that a door writes a ticket.checked_in event only when someone wants it.
func (s *Service) Subscribed(ctx context.Context, t ticketing.Tenant, typ string) (bool, error) {
	now, k := time.Now(), subKey{s.Store, t, typ}
	subscribed.Lock()
	e, ok := subscribed.m[k]
	subscribed.Unlock()
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
	subscribed.Lock()
	if subscribed.m == nil || len(subscribed.m) >= 10000 {
		subscribed.m = map[subKey]subEntry{}
	}
	subscribed.m[k] = subEntry{want: want, until: now.Add(subscribedTTL)}
	subscribed.Unlock()
	return want, nil
}
