package inmem

import (
	"context"
	"errors"
	"strconv"
	"time"

	"tix/internal/ticketing"
)

// holdIPRecord is a client IP's hold-request window and its live holds.
type holdIPRecord struct {
	window   int64
	n        int
	holds    map[string]time.Time
	version  int64
	versions bool // a hold was ever written through it (the version exists)
}

func (r *holdIPRecord) state() ticketing.HoldIPState {
	st := ticketing.HoldIPState{Holds: map[string]time.Time{}, Version: r.version}
	for id, until := range r.holds {
		st.Holds[id] = until
	}
	return st
}

// AdmitHoldIP counts a hold request against its client IP's fixed window.
func (s *Limits) AdmitHoldIP(_ context.Context, key string, limit int, window time.Duration, now time.Time) (ticketing.HoldIPState, bool, time.Time, error) {
	win := now.UnixMilli() / window.Milliseconds()
	reset := time.UnixMilli((win + 1) * window.Milliseconds()).UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.holdIPs[key]
	switch {
	case ok && r.window == win:
		if r.n >= limit {
			return r.state(), false, reset, nil
		}
		r.n++
		return r.state(), true, reset, nil
	case ok && r.window > win:
		return ticketing.HoldIPState{}, false, reset, errors.New("count hold request: rate window kept moving")
	case !ok:
		r = &holdIPRecord{holds: map[string]time.Time{}}
		s.holdIPs[key] = r
	}
	r.window, r.n = win, 1
	return r.state(), limit >= 1, reset, nil
}

// GetHoldIP reads the per-IP record (empty when there is none).
func (s *Limits) GetHoldIP(_ context.Context, key string) (ticketing.HoldIPState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.holdIPs[key]; ok {
		return r.state(), nil
	}
	return ticketing.HoldIPState{Holds: map[string]time.Time{}}, nil
}

// ForgetHoldIP removes a hold from its IP's record.
func (s *Limits) ForgetHoldIP(_ context.Context, key, holdID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.holdIPs[key]; ok {
		delete(r.holds, holdID)
	}
	return nil
}

// holdIPFits checks a per-IP update's condition: the version it read.
func (s *state) holdIPFits(u *ticketing.HoldIPUpdate) bool {
	r, ok := s.holdIPs[u.Key]
	if u.Version > 0 {
		return ok && r.versions && r.version == u.Version
	}
	return !ok || !r.versions
}

func (s *state) applyHoldIP(u *ticketing.HoldIPUpdate) {
	r, ok := s.holdIPs[u.Key]
	if !ok {
		r = &holdIPRecord{holds: map[string]time.Time{}}
		s.holdIPs[u.Key] = r
	}
	r.holds[u.Add] = u.Until
	for _, id := range u.Remove {
		delete(r.holds, id)
	}
	r.version, r.versions = u.Version+1, true
}

// AdmitClientRate counts a request against the fixed-window budget under key.
func (s *Limits) AdmitClientRate(_ context.Context, key string, limit int, window time.Duration, now time.Time) (bool, time.Time, error) {
	win := now.UnixMilli() / window.Milliseconds()
	reset := time.UnixMilli((win + 1) * window.Milliseconds()).UTC()
	k := key + "#" + strconv.FormatInt(win, 10)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clientRate[k] >= limit {
		return false, reset, nil
	}
	s.clientRate[k]++
	return true, reset, nil
}

// capRecord counts a client's pending publishable-key orders for one event,
// and the units of those orders and of its counted holds together.
type capRecord struct {
	orders, units int
	expiries      map[string]time.Time // order id -> expiry
	holds         map[string]*capHold  // hold id -> its counted seats
}

type capHold struct {
	until time.Time
	seats int
}

func (s *state) capOf(key string) *capRecord {
	r, ok := s.clientCaps[key]
	if !ok {
		r = &capRecord{expiries: map[string]time.Time{}, holds: map[string]*capHold{}}
		s.clientCaps[key] = r
	}
	return r
}

// ClientCapOverdue lists the counted orders whose expiry is at or before now.
func (s *Limits) ClientCapOverdue(_ context.Context, key string, now time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	if r, ok := s.clientCaps[key]; ok {
		for id, exp := range r.expiries {
			if exp.UnixMilli() <= now.UnixMilli() {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// ReleaseOverdueHolds gives back the seats still counted for each expired hold.
func (s *Limits) ReleaseOverdueHolds(_ context.Context, key string, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if r, ok := s.clientCaps[key]; ok {
		for id, h := range r.holds {
			if h.until.UnixMilli() <= now.UnixMilli() {
				r.units -= h.seats
				delete(r.holds, id)
				n++
			}
		}
	}
	return n, nil
}

func (s *state) capFits(o *ticketing.Order) bool {
	c := o.ClientCap
	r := s.capOf(c.Key)
	add := c.NewUnits(o.Quantity)
	if r.orders >= c.MaxOrders || (add > 0 && r.units > c.MaxUnits-add) {
		return false
	}
	for id, k := range c.Holds {
		if h, ok := r.holds[id]; !ok || h.seats < k {
			return false
		}
	}
	return true
}

func (s *state) capTake(o *ticketing.Order) {
	r := s.capOf(o.ClientCap.Key)
	r.orders++
	r.units += o.ClientCap.NewUnits(o.Quantity)
	r.expiries[o.ID] = o.ExpiresAt
	for id, k := range o.ClientCap.Holds {
		r.holds[id].seats -= k
	}
}

func (s *state) capGiveBack(o *ticketing.Order) {
	if o.ClientCap == nil {
		return
	}
	if r, ok := s.clientCaps[o.ClientCap.Key]; ok {
		r.orders--
		r.units -= o.Quantity
		delete(r.expiries, o.ID)
	}
}

// capHoldFits checks a hold's seats against its client's MaxUnits.
func (s *state) capHoldFits(h *ticketing.Hold) bool {
	return s.capOf(h.ClientCap.Key).units <= h.ClientCap.MaxUnits-len(h.Seats)
}

func (s *state) capHoldTake(h *ticketing.Hold) {
	r := s.capOf(h.ClientCap.Key)
	r.units += len(h.Seats)
	r.holds[h.ID] = &capHold{until: h.ExpiresAt, seats: len(h.Seats)}
}

// capSeatBack gives a released seat of a counted hold back.
func (s *state) capSeatBack(h *ticketing.Hold) {
	if h.ClientCap == nil {
		return
	}
	if ch, ok := s.capOf(h.ClientCap.Key).holds[h.ID]; ok && ch.seats >= 1 {
		ch.seats--
		s.clientCaps[h.ClientCap.Key].units--
	}
}
