package ticketing

import "time"

// StockKey addresses stock within one event and environment: an occurrence id (or
// NoOccurrence) and a tier or seat id.
type StockKey struct{ Occurrence, ID string }

// Seat states. Absent means available.
const (
	SeatHeld     = "held"     // by a seat hold until Until
	SeatReserved = "reserved" // by a pending order until Until
	SeatSold     = "sold"     // by a paid order
)

// SeatState is a seat that is, or was, taken. A held or reserved seat whose Until
// has passed is available again: no cleanup job is needed for that.
type SeatState struct {
	TierID string
	Status string
	Until  time.Time
	HoldID string // the seat hold that holds (or last held) the seat
}

// Taken reports whether the seat is unavailable at now.
func (s SeatState) Taken(now time.Time) bool {
	switch s.Status {
	case SeatSold:
		return true
	case SeatHeld, SeatReserved:
		return now.Before(s.Until)
	}
	return false
}

// Stock is the sales state of one event in one environment.
type Stock struct {
	// Sold counts units of general-admission and standing tiers taken by paid or
	// pending orders, per occurrence and tier.
	Sold map[StockKey]int
	// Shards is Sold per stock shard (shard index -> units), per occurrence and tier.
	Shards map[StockKey]map[int]int
	// Seats holds the seats that are or were taken, per occurrence and seat.
	Seats map[StockKey]SeatState
	// Promos are the uses of limited promo codes per shard of their counter
	// (code -> shard -> uses), when the store read them with the stock.
	Promos map[string]map[int]int
}

// TierCount is the stock of one tier, over one occurrence or all of them.
type TierCount struct{ Total, Sold, Available int }

// SoldOut reports whether nothing is left.
func (c TierCount) SoldOut() bool { return c.Available <= 0 }

// TierCount counts tier t over occurrenceID, or over every occurrence when it is "".
// Sold counts units taken by orders (paid or pending); seats held by a live hold
// are not sold but not available either.
func (s *Stock) TierCount(e *Event, t *Tier, occurrenceID string, now time.Time) TierCount {
	occs := e.OccurrenceKeys()
	if occurrenceID != "" {
		occs = []string{occurrenceID}
	}
	var c TierCount
	for _, occ := range occs {
		c.Total += t.Capacity
		if !t.Seated && s != nil {
			c.Sold += s.Sold[StockKey{occ, t.ID}]
		}
	}
	held := 0
	if t.Seated && s != nil {
		in := make(map[string]bool, len(occs))
		for _, o := range occs {
			in[o] = true
		}
		for k, st := range s.Seats {
			if st.TierID != t.ID || !in[k.Occurrence] || !st.Taken(now) {
				continue
			}
			if st.Status == SeatHeld {
				held++
			} else {
				c.Sold++
			}
		}
	}
	c.Available = c.Total - c.Sold - held
	if c.Available < 0 {
		c.Available = 0
	}
	return c
}

// SeatTaken reports whether a seat is unavailable in the occurrence at now.
func (s *Stock) SeatTaken(occurrenceID, seatID string, now time.Time) bool {
	if s == nil {
		return false
	}
	st, ok := s.Seats[StockKey{occurrenceID, seatID}]
	return ok && st.Taken(now)
}
