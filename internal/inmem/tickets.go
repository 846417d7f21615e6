package inmem

import (
	"context"
	"slices"

	"tix/internal/ticketcode"
	"tix/internal/ticketing"
)

// Tickets is the tickets' door state, with the DynamoDB store's conditions:
// a check-in needs no refund lock and none before it, a refund lock no
// check-in. It reads the ticket's event, occurrence and seat from its order.
type Tickets struct{ *state }

// TicketKeys keeps the ticket signing keys.
type TicketKeys struct{ *state }

var (
	_ ticketing.TicketStore    = (*Tickets)(nil)
	_ ticketing.TicketKeyStore = (*TicketKeys)(nil)
)

// ticketLocked is a ticket's check-in and refund lock, by environment#number.
type ticketDoor struct {
	checkIn       *ticketing.CheckIn
	refund        string
	transfer      string // a pending transfer
	transferredTo string // the number it was re-issued as
}

// ticket is the state of number in env (the caller holds the lock).
func (s *state) ticket(env ticketing.Environment, number string) ticketing.TicketState {
	key := string(env) + "#" + number
	st := ticketing.TicketState{Number: number}
	id, ok := s.tickets[key]
	if !ok {
		return st
	}
	o, err := decodeOrder(s.orders[id])
	if err != nil {
		return st
	}
	st.Found, st.OrderID, st.OrganizerID, st.EventID, st.OccurrenceID = true, o.ID, o.OrganizerID, o.EventID, o.OccurrenceID
	st.OrderNumber = o.TicketNumber
	if number == o.TicketNumber {
		st.Tickets = []string{}
		for _, tk := range o.Tickets {
			st.Tickets = append(st.Tickets, tk.Number)
		}
	}
	for _, tk := range o.Tickets {
		if tk.Number == number {
			st.Seat = tk.Seat
		}
	}
	if st.Tickets != nil {
		st.OrderNumber = ""
	}
	d := s.door[key]
	st.CheckIn, st.RefundID, st.TransferID, st.TransferredTo = d.checkIn, d.refund, d.transfer, d.transferredTo
	return st
}

func admissible(st ticketing.TicketState, t ticketing.Tenant, ci ticketing.CheckIn, events []string) bool {
	return st.Found && st.OrganizerID == t.OrganizerID && st.Tickets == nil && st.CheckIn == nil && st.RefundID == "" && st.TransferredTo == "" &&
		(len(events) == 0 || slices.Contains(events, st.EventID)) && (ci.OccurrenceID == "" || ci.OccurrenceID == st.OccurrenceID)
}

// Admit writes ci when the ticket is admissible, at once.
func (s *Tickets) Admit(_ context.Context, t ticketing.Tenant, ci ticketing.CheckIn, events []string) (ticketing.TicketState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.ticket(t.Environment, ci.TicketNumber)
	if !admissible(st, t, ci, events) {
		return st, nil
	}
	s.admit(t.Environment, ci)
	st.CheckIn, st.Admitted = &ci, true
	return st, nil
}

// AdmitAll admits every check-in, or none.
func (s *Tickets) AdmitAll(_ context.Context, t ticketing.Tenant, cis []ticketing.CheckIn, events []string) (bool, []int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var refused []int
	for i, ci := range cis {
		if !admissible(s.ticket(t.Environment, ci.TicketNumber), t, ci, events) {
			refused = append(refused, i)
		}
	}
	if len(refused) > 0 {
		return false, refused, nil
	}
	for _, ci := range cis {
		s.admit(t.Environment, ci)
	}
	return true, nil, nil
}

// UndoCheckIn removes a check-in of t's.
func (s *Tickets) UndoCheckIn(_ context.Context, t ticketing.Tenant, number, checkInID string) (*ticketing.CheckIn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.ticket(t.Environment, number)
	if !st.Found || st.OrganizerID != t.OrganizerID || st.CheckIn == nil || st.CheckIn.ID != checkInID {
		return nil, ticketing.NotFound("check-in")
	}
	key := string(t.Environment) + "#" + number
	d := s.door[key]
	d.checkIn = nil
	s.door[key] = d
	return st.CheckIn, nil
}

// CheckIns returns the check-ins of the numbers.
func (s *Tickets) CheckIns(_ context.Context, env ticketing.Environment, numbers []string) (map[string]ticketing.CheckIn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]ticketing.CheckIn{}
	for _, n := range numbers {
		if d := s.door[string(env)+"#"+n]; d.checkIn != nil {
			out[n] = *d.checkIn
		}
	}
	return out, nil
}

// DoorStates returns the door state of the numbers that exist.
func (s *Tickets) DoorStates(_ context.Context, env ticketing.Environment, numbers []string) (map[string]ticketing.TicketState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]ticketing.TicketState{}
	for _, n := range numbers {
		if st := s.ticket(env, n); st.Found {
			out[n] = st
		}
	}
	return out, nil
}

// admit records ci on its ticket (the caller holds the lock).
func (s *state) admit(env ticketing.Environment, ci ticketing.CheckIn) {
	key := string(env) + "#" + ci.TicketNumber
	d := s.door[key]
	d.checkIn = &ci
	s.door[key] = d
}

// LockForRefund locks every ticket of o, unless one was admitted, has a
// transfer pending or was transferred.
func (s *Tickets) LockForRefund(_ context.Context, o *ticketing.Order, refundID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tk := range o.Tickets {
		d := s.door[string(o.Environment)+"#"+tk.Number]
		if d.checkIn != nil || d.transfer != "" || d.transferredTo != "" || (d.refund != "" && d.refund != refundID) {
			return ticketing.ErrTicketAdmitted
		}
	}
	for _, tk := range o.Tickets {
		key := string(o.Environment) + "#" + tk.Number
		d := s.door[key]
		d.refund = refundID
		s.door[key] = d
	}
	return nil
}

// UnlockRefund removes refundID's locks.
func (s *Tickets) UnlockRefund(_ context.Context, o *ticketing.Order, refundID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tk := range o.Tickets {
		key := string(o.Environment) + "#" + tk.Number
		if d := s.door[key]; d.refund == refundID {
			d.refund = ""
			s.door[key] = d
		}
	}
	return nil
}

// GetTicketKeys reads a tenant's key set.
func (s *TicketKeys) GetTicketKeys(_ context.Context, t ticketing.Tenant) (*ticketcode.KeySet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ks, ok := s.ticketKeys[t]
	if !ok {
		return nil, ticketing.NotFound("ticket keys")
	}
	ks.Keys = slices.Clone(ks.Keys)
	return &ks, nil
}

// SaveTicketKeys writes a new key set (Version 0) or the next version.
func (s *TicketKeys) SaveTicketKeys(_ context.Context, ks *ticketcode.KeySet) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := ticketing.Tenant{OrganizerID: ks.OrganizerID, Environment: ticketing.Environment(ks.Environment)}
	old, ok := s.ticketKeys[t]
	if ok != (ks.Version > 0) || (ok && old.Version != ks.Version) {
		return ticketing.ErrStateChanged
	}
	ks.Version++
	c := *ks
	c.Keys = slices.Clone(ks.Keys)
	s.ticketKeys[t] = c
	return nil
}

// CheckInStats counts the event's tickets from its orders.
func (s *Tickets) CheckInStats(_ context.Context, t ticketing.Tenant, eventID, occurrenceID string) (*ticketing.CheckInStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &ticketing.CheckInStats{EventID: eventID, OccurrenceID: occurrenceID, Gates: map[string]int{}}
	for _, so := range s.orders {
		o, err := decodeOrder(so)
		if err != nil {
			return nil, err
		}
		if o.OrganizerID != t.OrganizerID || o.Environment != t.Environment || o.EventID != eventID ||
			(occurrenceID != "" && o.OccurrenceID != occurrenceID) {
			continue
		}
		for _, tk := range o.Tickets {
			d := s.door[string(o.Environment)+"#"+tk.Number]
			switch {
			case d.transferredTo != "":
			case d.refund != "":
				out.Refunded++
			case d.checkIn != nil:
				out.Sold++
				out.Admitted++
				out.Gates[d.checkIn.Gate]++
			default:
				out.Sold++
			}
		}
	}
	return out, nil
}
