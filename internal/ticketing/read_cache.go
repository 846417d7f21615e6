package ticketing

import (
	"context"
	"sync"
	"time"

	"tix/internal/clock"
)

// ReadCache keeps catalog views (an event and its stock) for a short time inside
// one process, so that a hot event's detail, tiers and availability reads do
// not reach the table once per buyer. Entries are keyed by organizer and
// environment as well as the event, so no tenant ever sees another's view.
//
// Only the catalog reads use it. Holds and orders never read it: their stock
// checks are conditional writes on the table, so a stale view can make a buyer
// try for a ticket that is gone (and be refused), never sell one twice.
//
// Freshness: the API reads through it for publishable keys only (secret-key
// reads go to the table: an integrator's server sees its own sales at once),
// and a process that moves an event's stock (Watch) drops that event's views,
// so only what other processes sold can be up to the TTL late.
//
// A nil *ReadCache caches nothing.
type ReadCache struct {
	clock clock.Clock
	ttl   time.Duration
	max   int

	mu      sync.Mutex
	entries map[viewKey]*cacheEntry
	// seq counts stock changes; changed is the seq of each event's latest
	// (Invalidate). An entry whose load began before its event's latest
	// change is stale.
	seq     uint64
	changed map[eventRef]uint64
}

// eventRef is one event of one tenant.
type eventRef struct {
	tenant  Tenant
	eventID string
}

// viewKey selects one view: by "id" or "slug", name, for a tenant and occurrence.
type viewKey struct {
	by, name, occurrence string
	tenant               Tenant
}

type cacheEntry struct {
	view  *EventView
	until time.Time
	ready chan struct{} // closed once view (or a failure) is known
	err   error
	seq   uint64 // ReadCache.seq when the load began
}

// DefaultReadCacheEntries bounds how many views one process keeps.
const DefaultReadCacheEntries = 10000

// NewReadCache makes a cache whose entries live for ttl; ttl <= 0 gives nil
// (every read goes to the table).
func NewReadCache(c clock.Clock, ttl time.Duration) *ReadCache {
	if ttl <= 0 {
		return nil
	}
	return &ReadCache{clock: c, ttl: ttl, max: DefaultReadCacheEntries, entries: map[viewKey]*cacheEntry{},
		changed: map[eventRef]uint64{}}
}

// Invalidate drops every view of the tenant's event (every occurrence, by id
// and by slug), including one being loaded now: this process changed the
// event's stock. Safe on a nil cache.
func (rc *ReadCache) Invalidate(t Tenant, eventID string) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.seq++
	if len(rc.changed) >= rc.max {
		// Bounded: forgetting the changes means forgetting every view.
		clear(rc.entries)
		clear(rc.changed)
	}
	rc.changed[eventRef{tenant: t, eventID: eventID}] = rc.seq
}

// stale reports whether e's event changed after e's load began (rc.mu held).
func (rc *ReadCache) stale(key viewKey, e *cacheEntry) bool {
	return e.view != nil && e.view.Event != nil && rc.changed[eventRef{tenant: key.tenant, eventID: e.view.Event.ID}] > e.seq
}

// TTL is how long an entry is reused (0 for a nil cache).
func (rc *ReadCache) TTL() time.Duration {
	if rc == nil {
		return 0
	}
	return rc.ttl
}

// get returns the live entry for key or loads it. Concurrent misses of one key
// in one process wait for a single load; a failed load is not kept, and a
// waiter whose loader failed loads for itself.
func (rc *ReadCache) get(ctx context.Context, key viewKey, load func() (*EventView, error)) (*EventView, error) {
	if rc == nil {
		return load()
	}
	now := rc.clock.Now()
	for {
		rc.mu.Lock()
		e, ok := rc.entries[key]
		if !ok {
			return rc.fill(key, now, load)
		}
		rc.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err != nil {
			return load()
		}
		rc.mu.Lock()
		if now.Before(e.until) && !rc.stale(key, e) {
			rc.mu.Unlock()
			return e.view, nil
		}
		if rc.entries[key] == e {
			delete(rc.entries, key)
		}
		rc.mu.Unlock()
	}
}

// fill loads key's view (rc.mu held on entry, released here) and keeps it for
// the TTL; a failure is returned and not kept.
func (rc *ReadCache) fill(key viewKey, now time.Time, load func() (*EventView, error)) (*EventView, error) {
	e := &cacheEntry{ready: make(chan struct{}), seq: rc.seq}
	if rc.room(now) {
		rc.entries[key] = e
	}
	rc.mu.Unlock()
	e.view, e.err = load()
	e.until = rc.clock.Now().Add(rc.ttl)
	if e.err != nil {
		rc.mu.Lock()
		if rc.entries[key] == e {
			delete(rc.entries, key)
		}
		rc.mu.Unlock()
	}
	close(e.ready)
	return e.view, e.err
}

// room makes space for one more entry (rc.mu held): when the cache is full it
// drops the expired entries; if none expired, the new view is not kept.
func (rc *ReadCache) room(now time.Time) bool {
	if len(rc.entries) < rc.max {
		return true
	}
	for k, e := range rc.entries {
		select {
		case <-e.ready:
			if !now.Before(e.until) {
				delete(rc.entries, k)
			}
		default:
		}
	}
	return len(rc.entries) < rc.max
}
