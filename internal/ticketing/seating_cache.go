package ticketing

import (
	"context"
	"sync"
	"time"
)

// SeatingMaps keep decoded seating maps in the process: the seat holds
// resolve seats from them, and the seating map read renders them. A large
// map is a large read and a long decode (the demo stadium's is about 800 KB
// compressed, some 100 read units, all from the event's one partition, and
// half of the read's time), while a map changes only with its event
// (updated_at). So a map is read again only when its event changed: at most
// once per maxAge (per call) the event item alone is read (as the order
// path's EventCache does) and the map kept when the event's updated_at is
// the same. Seat statuses are never kept here: they are stock, read by each
// caller. An entry is read whole again after seatingMapMaxLife at the latest,
// so that a map read from a replica behind its event item heals.
type SeatingMaps struct {
	mu    sync.Mutex
	maps  map[string]seatingMap
	seats int // seats of the maps kept, bounded by maxCachedSeats
}

type seatingMap struct {
	e       *Event
	checked time.Time // wall clock: the event item was last compared
	loaded  time.Time // wall clock: the map was read
}

// seatingMapMaxLife is how long a kept map is used before it is read again
// whatever its event's updated_at says.
const seatingMapMaxLife = time.Minute

// maxCachedSeats bounds the maps a process keeps by their seats (about 150
// bytes each decoded: 200,000 seats are about 30 MB, four 50,000-seat
// stadiums); the maps are dropped when a new one would pass it.
const maxCachedSeats = 200_000

// seatingReader reads events with and without their maps.
type seatingReader interface {
	GetEvent(ctx context.Context, organizerID, eventID string, env Environment) (*Event, error)
	GetEventWithSeating(ctx context.Context, organizerID, eventID string, env Environment) (*Event, error)
}

// event is GetEventWithSeating through the kept maps: an entry younger than
// maxAge is used as is (0: the event item is read on every call, so the event
// is as fresh as the table's and only the map is reused). The returned event
// and its map are shared: callers must not change them.
func (m *SeatingMaps) event(ctx context.Context, st seatingReader, t Tenant, eventID string, maxAge time.Duration) (*Event, error) {
	key := t.OrganizerID + "\x00" + string(t.Environment) + "\x00" + eventID
	m.mu.Lock()
	sm, ok := m.maps[key]
	m.mu.Unlock()
	now := time.Now()
	ok = ok && now.Sub(sm.loaded) < seatingMapMaxLife
	if ok && now.Sub(sm.checked) < maxAge {
		return sm.e, nil
	}
	var e *Event
	if ok {
		fresh, err := st.GetEvent(ctx, t.OrganizerID, eventID, t.Environment)
		if err != nil {
			return nil, err
		}
		if fresh.UpdatedAt.Equal(sm.e.UpdatedAt) && fresh.HasSeating == sm.e.HasSeating {
			fresh.Seating, e = sm.e.Seating, fresh
		}
	}
	if e == nil {
		var err error
		if e, err = st.GetEventWithSeating(ctx, t.OrganizerID, eventID, t.Environment); err != nil {
			return nil, err
		}
		sm.loaded = now
	}
	m.keep(key, seatingMap{e: e, checked: now, loaded: sm.loaded})
	return e, nil
}

// keep stores an entry, dropping every map first when it would pass the
// bounds.
func (m *SeatingMaps) keep(key string, sm seatingMap) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := seatCount(sm.e.Seating)
	if old, ok := m.maps[key]; ok {
		m.seats -= seatCount(old.e.Seating)
	}
	if m.maps == nil || len(m.maps) >= maxCachedEvents || m.seats+n > maxCachedSeats {
		m.maps, m.seats = map[string]seatingMap{}, 0
	}
	m.maps[key] = sm
	m.seats += n
}

func seatCount(st *Seating) int {
	if st == nil {
		return 0
	}
	n := 0
	for _, z := range st.Zones {
		n += len(z.Seats)
	}
	return n
}

// seatedEvent is GetEventWithSeating through the process's seating maps,
// each at most DefaultEventCacheTTL behind its event.
func (s *Holds) seatedEvent(ctx context.Context, c Caller, eventID string) (*Event, error) {
	return s.seatingMaps.event(ctx, s.Catalog, c.Tenant, eventID, DefaultEventCacheTTL)
}
