package ticketing

import (
	"context"
	"sync"
	"time"
)

// EventCache keeps the events and tier lookups the order path prices from
// for a short while (DefaultEventCacheTTL), so that an on-sale's orders do not each read
// the same event item. What it reads there is prices, capacities, sales
// windows and promo codes; stock is never cached (each order's transaction
// checks it), so a stale event can only mean that a catalog change (a price,
// a sales window, a capacity) takes effect up to the TTL later for orders.
// A capacity lowered in that window cannot oversell below what is sold: a
// reimport refuses a capacity that does not hold the units sold.

// DefaultEventCacheTTL is how long an event is priced from without reading it again.
const DefaultEventCacheTTL = time.Second

// NewEventCache returns an empty cache keeping events for ttl.
func NewEventCache(ttl time.Duration) *EventCache { return &EventCache{ttl: ttl} }

// maxCachedEvents bounds the cache; it is emptied when full.
const maxCachedEvents = 1024

type EventCache struct {
	ttl    time.Duration
	mu     sync.Mutex
	events map[string]cachedEvent
	tiers  map[string][2]string // tier id -> organizer, event
}

type cachedEvent struct {
	e     *Event
	until time.Time
}

// pricedEvent is GetEvent through the cache. Expiry follows the wall clock,
// not the service clock, which tests may stop.
func (s *Pricing) pricedEvent(ctx context.Context, c Caller, eventID string) (*Event, error) {
	cache := s.EventCache
	if cache == nil || cache.ttl <= 0 {
		return s.Catalog.GetEvent(ctx, c.OrganizerID, eventID, c.Environment)
	}
	key := c.OrganizerID + "\x00" + string(c.Environment) + "\x00" + eventID
	now := time.Now()
	cache.mu.Lock()
	ce, ok := cache.events[key]
	cache.mu.Unlock()
	if ok && now.Before(ce.until) {
		return ce.e, nil
	}
	e, err := s.Catalog.GetEvent(ctx, c.OrganizerID, eventID, c.Environment)
	if err != nil {
		return nil, err
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if cache.events == nil || len(cache.events) >= maxCachedEvents {
		cache.events = map[string]cachedEvent{}
	}
	cache.events[key] = cachedEvent{e: e, until: now.Add(cache.ttl)}
	return e, nil
}

// tierEvent is TierEvent through the cache: a tier never moves to another
// event, so its answer is kept for as long as the process lives.
func (s *Pricing) tierEvent(ctx context.Context, tierID string) (string, string, error) {
	cache := s.EventCache
	if cache != nil {
		cache.mu.Lock()
		ref, ok := cache.tiers[tierID]
		cache.mu.Unlock()
		if ok {
			return ref[0], ref[1], nil
		}
	}
	org, ev, err := s.Catalog.TierEvent(ctx, tierID)
	if err != nil || cache == nil {
		return org, ev, err
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if cache.tiers == nil || len(cache.tiers) >= maxCachedEvents {
		cache.tiers = map[string][2]string{}
	}
	cache.tiers[tierID] = [2]string{org, ev}
	return org, ev, nil
}
