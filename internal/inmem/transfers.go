package inmem

import (
	"context"

	"tix/internal/ticketing"
)

// Transfers keeps ticket transfers with the DynamoDB store's conditions:
// each change is one step over the transfer and its ticket's door state.
type Transfers struct{ *state }

var _ ticketing.TransferStore = (*Transfers)(nil)

// Transfers is the store's transfers (a method: Store's fields are the
// sales ports).
func (s *Store) Transfers() *Transfers { return &Transfers{s.Tickets.state} }

// CreateTransfer writes a pending transfer and marks its ticket.
func (s *Transfers) CreateTransfer(_ context.Context, tr *ticketing.Transfer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.ticket(tr.Environment, tr.TicketNumber)
	if !st.Found || st.OrganizerID != tr.OrganizerID || st.Tickets != nil || st.CheckIn != nil || st.RefundID != "" ||
		st.TransferID != "" || st.TransferredTo != "" {
		return ticketing.ErrTicketLocked
	}
	if _, ok := s.transfers[tr.ID]; ok {
		return ticketing.ErrTicketLocked
	}
	key := string(tr.Environment) + "#" + tr.TicketNumber
	d := s.door[key]
	d.transfer = tr.ID
	s.door[key] = d
	tr.Version = 1
	s.transfers[tr.ID] = *tr
	return nil
}

// GetTransfer reads a transfer.
func (s *Transfers) GetTransfer(_ context.Context, id string) (*ticketing.Transfer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tr, ok := s.transfers[id]
	if !ok {
		return nil, ticketing.NotFound("transfer")
	}
	return &tr, nil
}

// pending reports whether tr is stored pending at its version (lock held).
func (s *state) pending(tr *ticketing.Transfer) bool {
	cur, ok := s.transfers[tr.ID]
	return ok && cur.Status == ticketing.TransferPending && cur.Version == tr.Version
}

// CancelTransfer writes the cancelled tr over the pending one and removes
// the ticket's mark.
func (s *Transfers) CancelTransfer(_ context.Context, tr *ticketing.Transfer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := string(tr.Environment) + "#" + tr.TicketNumber
	if !s.pending(tr) || s.door[key].transfer != tr.ID {
		return ticketing.ErrStateChanged
	}
	d := s.door[key]
	d.transfer = ""
	s.door[key] = d
	tr.Version++
	s.transfers[tr.ID] = *tr
	return nil
}

// AcceptTransfer: pending -> accepted, the old ticket transferred, the new
// order with its numbers and the event.
func (s *Transfers) AcceptTransfer(_ context.Context, tr *ticketing.Transfer, o *ticketing.Order, ev *ticketing.OrderEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pending(tr) {
		return ticketing.ErrStateChanged
	}
	key := string(tr.Environment) + "#" + tr.TicketNumber
	if d := s.door[key]; d.transfer != tr.ID || d.checkIn != nil || d.refund != "" || d.transferredTo != "" {
		return ticketing.ErrTicketLocked
	}
	for _, n := range append([]string{o.TicketNumber}, o.Tickets[0].Number) {
		if _, taken := s.tickets[string(o.Environment)+"#"+n]; taken {
			return ticketing.ErrTicketNumberTaken
		}
	}
	if err := s.put(o, 1); err != nil {
		return err
	}
	for _, tk := range append([]string{o.TicketNumber}, o.Tickets[0].Number) {
		s.tickets[string(o.Environment)+"#"+tk] = o.ID
	}
	d := s.door[key]
	d.transfer, d.transferredTo = "", tr.NewTicketNumber
	s.door[key] = d
	s.outbox[ev.ID] = *ev
	tr.Version++
	s.transfers[tr.ID] = *tr
	o.Version = 1
	return nil
}
