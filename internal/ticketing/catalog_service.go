package ticketing

import (
	"context"
	"time"

	"tix/internal/clock"
)

// CatalogStore is what the catalog reads need from storage. Every method answers
// not_found for another organizer's event or a draft, exactly as for a missing id.
type CatalogStore interface {
	GetEvent(ctx context.Context, organizerID, eventID string, env Environment) (*Event, error)
	GetEventBySlug(ctx context.Context, organizerID, slug string, env Environment) (*Event, error)
	GetEventWithSeating(ctx context.Context, organizerID, eventID string, env Environment) (*Event, error)
	ListEvents(ctx context.Context, q EventQuery) (*EventPage, error)
	GetStock(ctx context.Context, eventID string, env Environment, occurrenceID string) (*Stock, error)
	// StockOf is GetStock of an event at hand (cheaper: it knows the tiers' shards).
	StockOf(ctx context.Context, e *Event, env Environment, occurrenceID string) (*Stock, error)
}

// Tenant is who is asking: an organizer in one environment.
type Tenant struct {
	OrganizerID string
	Environment Environment
}

// Catalog answers the read side of the contract.
type Catalog struct {
	Store CatalogStore
	Clock clock.Clock
	// Cache, when set, serves Event, EventBySlug and Availability from views up
	// to its TTL old. Seating and the event list always read the table.
	Cache *ReadCache
	// Maps, when set, keeps decoded seating maps for Seating: each read still
	// reads the event item and the stock, and reads the map again only when
	// the event changed (seating_cache.go).
	Maps *SeatingMaps
}

// Fresh is c reading the table every time (no Cache): the reads of secret
// keys, whose integrators must see their own sales at once.
func (c *Catalog) Fresh() *Catalog {
	cp := *c
	cp.Cache = nil
	return &cp
}

// EventView is an event with its stock, as of Now.
type EventView struct {
	Event        *Event
	Stock        *Stock
	OccurrenceID string // "" = every occurrence
	Now          time.Time
}

// Event reads an event and its stock (two requests: the event, its stock
// partition), or takes them from the cache.
func (c *Catalog) Event(ctx context.Context, t Tenant, id string) (*EventView, error) {
	return c.cached(ctx, cacheKey("id", t, id, ""), func() (*EventView, error) {
		e, err := c.Store.GetEvent(ctx, t.OrganizerID, id, t.Environment)
		if err != nil {
			return nil, err
		}
		return c.withStock(ctx, t, e, "")
	})
}

// EventBySlug is Event looked up by slug.
func (c *Catalog) EventBySlug(ctx context.Context, t Tenant, slug string) (*EventView, error) {
	return c.cached(ctx, cacheKey("slug", t, slug, ""), func() (*EventView, error) {
		e, err := c.Store.GetEventBySlug(ctx, t.OrganizerID, slug, t.Environment)
		if err != nil {
			return nil, err
		}
		return c.withStock(ctx, t, e, "")
	})
}

// Availability reads an event's stock for one occurrence or, when occurrenceID is
// empty, for all of them (the same view as Event, and the same cache entry).
func (c *Catalog) Availability(ctx context.Context, t Tenant, id, occurrenceID string) (*EventView, error) {
	if occurrenceID == "" {
		return c.Event(ctx, t, id)
	}
	return c.cached(ctx, cacheKey("id", t, id, occurrenceID), func() (*EventView, error) {
		e, err := c.Store.GetEvent(ctx, t.OrganizerID, id, t.Environment)
		if err != nil {
			return nil, err
		}
		if err := checkOccurrence(e, occurrenceID); err != nil {
			return nil, err
		}
		return c.withStock(ctx, t, e, occurrenceID)
	})
}

// cacheKey names a view by everything that selects it: the tenant (organizer
// and environment: stock is per environment), how the event was named, and
// the occurrence.
func cacheKey(by string, t Tenant, name, occurrenceID string) viewKey {
	return viewKey{by: by, tenant: t, name: name, occurrence: occurrenceID}
}

// cached returns a copy of the (possibly cached) view, as of now: the counts a
// response shows (a hold past its expiry is available) are worked out at Now.
func (c *Catalog) cached(ctx context.Context, key viewKey, load func() (*EventView, error)) (*EventView, error) {
	v, err := c.Cache.get(ctx, key, load)
	if err != nil {
		return nil, err
	}
	cp := *v
	cp.Now = c.Clock.Now()
	return &cp, nil
}

// Seating reads the seating map with seat statuses for one occurrence (the
// event and its stock from the table on every call, the map through Maps). For an
// event with occurrences and no occurrenceID, statuses are those of the next
// scheduled occurrence (or the last one when all have started).
func (c *Catalog) Seating(ctx context.Context, t Tenant, id, occurrenceID string) (*EventView, error) {
	var e *Event
	var err error
	if c.Maps != nil {
		e, err = c.Maps.event(ctx, c.Store, t, id, 0)
	} else {
		e, err = c.Store.GetEventWithSeating(ctx, t.OrganizerID, id, t.Environment)
	}
	if err != nil {
		return nil, err
	}
	if err := checkOccurrence(e, occurrenceID); err != nil {
		return nil, err
	}
	now := c.Clock.Now()
	if occurrenceID == "" {
		occurrenceID = DefaultOccurrence(e, now)
	}
	return c.withStock(ctx, t, e, occurrenceID)
}

// DefaultOccurrence is the occurrence a seat map shows when none is asked for.
func DefaultOccurrence(e *Event, now time.Time) string {
	if len(e.Occurrences) == 0 {
		return NoOccurrence
	}
	if o := e.NextOccurrence(now); o != nil {
		return o.ID
	}
	return e.Occurrences[len(e.Occurrences)-1].ID
}

// Events lists events.
func (c *Catalog) Events(ctx context.Context, q EventQuery) (*EventPage, error) {
	q.Now = c.Clock.Now()
	return c.Store.ListEvents(ctx, q)
}

func (c *Catalog) withStock(ctx context.Context, t Tenant, e *Event, occurrenceID string) (*EventView, error) {
	stockOcc := occurrenceID
	if stockOcc == NoOccurrence {
		stockOcc = ""
	}
	st, err := c.Store.StockOf(ctx, e, t.Environment, stockOcc)
	if err != nil {
		return nil, err
	}
	return &EventView{Event: e, Stock: st, OccurrenceID: occurrenceID, Now: c.Clock.Now()}, nil
}

func checkOccurrence(e *Event, occurrenceID string) error {
	if occurrenceID == "" {
		return nil
	}
	if _, ok := e.Occurrence(occurrenceID); !ok {
		err := NotFound("occurrence " + occurrenceID + " of this event")
		err.Param = "occurrence_id"
		return err
	}
	return nil
}
