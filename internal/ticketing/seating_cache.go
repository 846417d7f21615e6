package ticketing

import (
	"context"
	"sync"
	"time"
)

// seatingMaps keep the seating maps holds resolve seats from. A large map is
// a large read (the demo stadium's is about 800 KB, some 100 read units, all
// from the event's one partition), so a process reads it again only when its
// event changed (updated_at): at most once per DefaultEventCacheTTL it reads
// the event item alone (as the order path's EventCache does) and keeps the
// map it has when the event's updated_at is the same.
type seatingMaps struct {
	mu   sync.Mutex
	maps map[string]seatingMap
}

type seatingMap struct {
	e       *Event
	checked time.Time // wall clock
}

// seatedEvent is GetEventWithSeating through the process's seating maps.
func (s *Holds) seatedEvent(ctx context.Context, c Caller, eventID string) (*Event, error) {
	key := c.OrganizerID + "\x00" + string(c.Environment) + "\x00" + eventID
	s.seatingMaps.mu.Lock()
	sm, ok := s.seatingMaps.maps[key]
	s.seatingMaps.mu.Unlock()
	if ok && time.Since(sm.checked) < DefaultEventCacheTTL {
		return sm.e, nil
	}
	var e *Event
	if ok {
		fresh, err := s.Catalog.GetEvent(ctx, c.OrganizerID, eventID, c.Environment)
		if err != nil {
			return nil, err
		}
		if fresh.UpdatedAt.Equal(sm.e.UpdatedAt) && fresh.HasSeating == sm.e.HasSeating {
			fresh.Seating, e = sm.e.Seating, fresh
		}
	}
	if e == nil {
		var err error
		if e, err = s.Catalog.GetEventWithSeating(ctx, c.OrganizerID, eventID, c.Environment); err != nil {
			return nil, err
		}
	}
	s.seatingMaps.mu.Lock()
	defer s.seatingMaps.mu.Unlock()
	if s.seatingMaps.maps == nil || len(s.seatingMaps.maps) >= maxCachedEvents {
		s.seatingMaps.maps = map[string]seatingMap{}
	}
	s.seatingMaps.maps[key] = seatingMap{e: e, checked: time.Now()}
	return e, nil
}
