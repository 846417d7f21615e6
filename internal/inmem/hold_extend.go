package inmem

import (
	"context"
	"time"

	"tix/internal/ticketing"
)

// ExtendHold moves a hold's expiry and its seats' to until at once, with the
// DynamoDB store's conditions: each seat held by its reservation and live,
// the hold's expiry not later than until, its client count still there.
func (s *Holds) ExtendHold(_ context.Context, h *ticketing.Hold, seats []ticketing.HoldSeat, until, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]seatKey, len(seats))
	for i, seat := range seats {
		keys[i] = seatKey{h.EventID, string(h.Environment), h.OccurrenceID, seat.SeatID}
		r, ok := s.seats[keys[i]]
		if !ok || r.resv != seat.ReservationID || r.state != ticketing.SeatHeld || !r.until.After(now) {
			return &ticketing.StockError{Index: i, Seat: true}
		}
	}
	cur, ok := s.holds[h.ID]
	if !ok || (until.After(now) && cur.ExpiresAt.After(until)) {
		return ticketing.ErrStateChanged
	}
	var counted *capHold
	if h.ClientCap != nil {
		if counted = s.capOf(h.ClientCap.Key).holds[h.ID]; counted == nil {
			return ticketing.ErrStateChanged
		}
		counted.until = until
	}
	for _, k := range keys {
		r := s.seats[k]
		r.until = until
		s.seats[k] = r
	}
	cur.ExpiresAt = until
	s.holds[h.ID] = cur
	if r, ok := s.holdIPs[h.IPKey]; ok && h.IPKey != "" {
		if _, held := r.holds[h.ID]; held {
			r.holds[h.ID] = until
			r.version++
		}
	}
	return nil
}
