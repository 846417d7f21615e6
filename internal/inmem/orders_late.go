package inmem

import (
	"context"
	"fmt"
	"time"

	"tix/internal/ticketing"
)

// ReinstateOrder: cancelled -> paid for a late payment, its stock taken again
// (counters within capacity, seats only when free) straight to sold, ticket
// numbers, outbox event, done markers deleted, at once.
func (s *Orders) ReinstateOrder(_ context.Context, o *ticketing.Order, ev *ticketing.Event, oe *ticketing.OrderEvent, now time.Time, done []ticketing.Timer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fromState(o, ticketing.OrderCancelled, nil) {
		return ticketing.ErrStateChanged
	}
	for i, l := range o.Lines {
		if l.Seated && !s.reinstatable(o, l, now) {
			return &ticketing.StockError{Index: i, Seat: true}
		}
	}
	if err := s.planLines(o, ev); err != nil {
		return err
	}
	numbers := append([]string{o.TicketNumber}, ticketNumbers(o)...)
	for _, n := range numbers {
		if _, taken := s.tickets[string(o.Environment)+"#"+n]; taken {
			return ticketing.ErrTicketNumberTaken
		}
	}
	if err := s.put(o, o.Version+1); err != nil {
		return err
	}
	for _, l := range o.Lines {
		if l.Seated {
			s.seats[lineSeat(o, l)] = seatRecord{tier: l.TierID, state: ticketing.SeatSold, order: o.ID}
		} else {
			s.moveLine(o, l, 1)
		}
	}
	if o.Promo != nil && o.Promo.Limited {
		s.promoUses[promoKey(o, o.Promo.Code)]++
	}
	for _, n := range numbers {
		s.tickets[string(o.Environment)+"#"+n] = o.ID
	}
	s.outbox[oe.ID] = *oe
	for _, t := range done {
		delete(s.due, dueKey(t))
	}
	o.Version++
	return nil
}

// reinstatable: a reinstated order takes a seat when free, or still reserved
// by the order itself (as the DynamoDB store, whose release after a
// cancellation is best-effort).
func (s *state) reinstatable(o *ticketing.Order, l ticketing.OrderLine, now time.Time) bool {
	k := lineSeat(o, l)
	r, ok := s.seats[k]
	return s.seatFree(k, now) || (ok && r.order == o.ID && r.state == ticketing.SeatReserved)
}

func ticketNumbers(o *ticketing.Order) []string {
	out := make([]string, 0, len(o.Tickets))
	for _, t := range o.Tickets {
		out = append(out, t.Number)
	}
	return out
}

// SaveOrder rewrites an order still in status expect at its version, with
// markers written and deleted, at once.
func (s *Orders) SaveOrder(_ context.Context, o *ticketing.Order, expect ticketing.OrderStatus, put, done []ticketing.Timer) error {
	if o.Status != expect {
		return fmt.Errorf("save order %s: status %s, want %s (a save never changes it)", o.ID, o.Status, expect)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fromState(o, expect, nil) {
		return ticketing.ErrStateChanged
	}
	if err := s.put(o, o.Version+1); err != nil {
		return err
	}
	for _, t := range done {
		delete(s.due, dueKey(t))
	}
	for _, t := range put {
		s.due[dueKey(t)] = t
	}
	o.Version++
	return nil
}
