package inmem

import (
	"context"
	"time"

	"tix/internal/ticketing"
)

// seatFree is the condition a seat is taken under without a reservation: no
// item, or held or reserved past its expiry.
func (s *state) seatFree(k seatKey, now time.Time) bool {
	r, ok := s.seats[k]
	return !ok || (r.state != ticketing.SeatSold && !r.until.After(now))
}

// CreateHold takes every seat and writes the hold, its idempotency record and
// the per-IP update at once, or nothing.
func (s *Holds) CreateHold(_ context.Context, h *ticketing.Hold, idem *ticketing.Idempotency, ip *ticketing.HoldIPUpdate, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if idem != nil {
		if old, ok := s.idem[idemKey(idem.Tenant, idem.Scope, idem.Key)]; ok && old.LeaseUntil.After(now) {
			return ticketing.ErrIdempotencyTaken
		}
	}
	for i, seat := range h.Seats {
		if !s.seatFree(seatKey{h.EventID, string(h.Environment), h.OccurrenceID, seat.SeatID}, now) {
			return &ticketing.StockError{Index: i, Seat: true}
		}
	}
	if ip != nil && !s.holdIPFits(ip) {
		return ticketing.ErrIPRace
	}
	if h.ClientCap != nil && !s.capHoldFits(h) {
		return ticketing.ErrClientCap
	}
	for _, seat := range h.Seats {
		s.seats[seatKey{h.EventID, string(h.Environment), h.OccurrenceID, seat.SeatID}] = seatRecord{
			tier: seat.TierID, state: ticketing.SeatHeld, until: h.ExpiresAt, hold: h.ID, resv: seat.ReservationID}
	}
	s.holds[h.ID] = copyHold(h)
	if idem != nil {
		s.idem[idemKey(idem.Tenant, idem.Scope, idem.Key)] = *idem
	}
	if ip != nil {
		s.applyHoldIP(ip)
	}
	if h.ClientCap != nil {
		s.capHoldTake(h)
	}
	return nil
}

func copyHold(h *ticketing.Hold) ticketing.Hold {
	c := *h
	c.Seats = append([]ticketing.HoldSeat(nil), h.Seats...)
	return c
}

// GetHold reads a hold.
func (s *Holds) GetHold(_ context.Context, id string) (*ticketing.Hold, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holds[id]
	if !ok {
		return nil, ticketing.NotFound("hold")
	}
	c := copyHold(&h)
	return &c, nil
}

// ReleaseSeat frees a seat while this reservation still holds it, live.
func (s *Holds) ReleaseSeat(_ context.Context, h *ticketing.Hold, seat ticketing.HoldSeat, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := seatKey{h.EventID, string(h.Environment), h.OccurrenceID, seat.SeatID}
	r, ok := s.seats[k]
	if !ok || r.resv != seat.ReservationID || r.state != ticketing.SeatHeld || !r.until.After(now) {
		return false, nil
	}
	delete(s.seats, k)
	s.capSeatBack(h)
	return true, nil
}
