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
// A nil *ReadCache caches nothing.
type ReadCache struct {
	clock clock.Clock
	ttl   time.Duration
	max   int

	mu      sync.Mutex
	entries map[viewKey]*cacheEntry
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
}

// DefaultReadCacheEntries bounds how many views one process keeps.
const DefaultReadCacheEntries = 10000

// NewReadCache makes a cache whose entries live for ttl; ttl <= 0 gives nil
// (every read goes to the table).
func NewReadCache(c clock.Clock, ttl time.Duration) *ReadCache {
	if ttl <= 0 {
		return nil
	}
	return &ReadCache{clock: c, ttl: ttl, max: DefaultReadCacheEntries, entries: map[viewKey]*cacheEntry{}}
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
		if now.Before(e.until) {
			return e.view, nil
		}
		rc.mu.Lock()
		if rc.entries[key] == e {
			delete(rc.entries, key)
		}
		rc.mu.Unlock()
	}
}

// fill loads key's view (rc.mu held on entry, released here) and keeps it for
// the TTL; a failure is returned and not kept.
func (rc *ReadCache) fill(key viewKey, now time.Time, load func() (*EventView, error)) (*EventView, error) {
	e := &cacheEntry{ready: make(chan struct{})}
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
