package inmem

import (
	"context"
	"slices"
	"strings"

	"tix/internal/ticketing"
)

// The offline doors' store methods (store/checkin_offline.go), with the
// same conditions, over the tickets' door state.

// TicketState reads the door state of a ticket number.
func (s *Tickets) TicketState(_ context.Context, env ticketing.Environment, number string) (ticketing.TicketState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ticket(env, number), nil
}

// ReplaceCheckIn makes ci the admission when prev still is, and keeps prev.
func (s *Tickets) ReplaceCheckIn(_ context.Context, t ticketing.Tenant, ci, prev ticketing.CheckIn, events []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.ticket(t.Environment, ci.TicketNumber)
	if st.CheckIn == nil || st.CheckIn.ID != prev.ID {
		return ticketing.ErrStateChanged
	}
	st.CheckIn = nil
	if !admissible(st, t, ci, events) {
		return ticketing.ErrStateChanged
	}
	s.door[string(t.Environment)+"#"+ci.TicketNumber] = ticketDoor{checkIn: &ci}
	s.superseded[string(t.Environment)+"#"+t.OrganizerID+"#"+prev.ID] = prev
	return nil
}

// RecordScan keeps the first record of each client scan id.
func (s *Tickets) RecordScan(_ context.Context, t ticketing.Tenant, r ticketing.ScanRecord) (ticketing.ScanRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := string(t.Environment) + "#" + t.OrganizerID + "#" + r.ClientScanID
	if old, ok := s.scans[key]; ok {
		return old, true, nil
	}
	s.scans[key] = r
	return r, false, nil
}

// AdmissionTickets pages the event's tickets in number order; the cursor
// is the last number of the previous page.
func (s *Tickets) AdmissionTickets(_ context.Context, t ticketing.Tenant, eventID, occurrenceID string, limit int, cursor string) ([]ticketing.TicketState, string, error) {
	after, ok := strings.CutPrefix(cursor, "after:")
	if cursor != "" && (!ok || after == "") {
		return nil, "", ticketing.Invalid("cursor", "cursor is not valid for this query")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []ticketing.TicketState
	for key := range s.tickets {
		env, number, _ := strings.Cut(key, "#")
		if env != string(t.Environment) || number <= after {
			continue
		}
		st := s.ticket(t.Environment, number)
		if st.Tickets == nil && st.OrganizerID == t.OrganizerID && st.EventID == eventID && (occurrenceID == "" || st.OccurrenceID == occurrenceID) {
			all = append(all, st)
		}
	}
	slices.SortFunc(all, func(a, b ticketing.TicketState) int { return strings.Compare(a.Number, b.Number) })
	if len(all) <= limit {
		return all, "", nil
	}
	return all[:limit], "after:" + all[limit-1].Number, nil
}

// PutCheckInEvent keeps a ticket.checked_in event once.
func (s *Tickets) PutCheckInEvent(_ context.Context, ev *ticketing.OrderEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.outbox[ev.ID]; !ok {
		s.outbox[ev.ID] = *ev
	}
	return nil
}
