package ticketing

import (
	"context"
	"errors"
	"log/slog"
	"strings"
)

// TransferOffers sends a transfer's recipient the email with the accept
// link (emailjobs.Service): written as a job, sent by the deliver function.
type TransferOffers interface {
	TransferOffer(ctx context.Context, tr *Transfer, eventTitle, link string) error
}

// Transfers moves tickets from one holder to another (docs/transfers.md).
type Transfers struct {
	Store  TransferStore
	Door   TicketStore
	Orders *Orders
	// Offers sends the accept link (nil: email is off, and a transfer
	// cannot be offered).
	Offers TransferOffers
	// AcceptURL is the accept page's link for a transfer and its secret.
	AcceptURL func(id, token string) string
}

// TransferRequest is POST /v1/tickets/{ticket_number}/transfers.
type TransferRequest struct {
	ToEmail string
	ToName  *string
}

// MaxTransferName bounds the recipient's name.
const MaxTransferName = 200

// Create offers ticket number to req's recipient: a pending transfer, and
// the email with its accept link.
func (s *Transfers) Create(ctx context.Context, c Caller, number string, req TransferRequest) (*Transfer, error) {
	req.ToEmail = strings.TrimSpace(req.ToEmail)
	if req.ToEmail == "" {
		return nil, Invalid("to.email", "to.email is required: the address the ticket goes to")
	}
	if err := checkEmail("to.email", req.ToEmail); err != nil {
		return nil, err
	}
	if req.ToName != nil && (len(*req.ToName) > MaxTransferName || strings.ContainsFunc(*req.ToName, isControl)) {
		return nil, Invalid("to.name", "to.name is at most %d characters on one line", MaxTransferName)
	}
	if s.Offers == nil || s.AcceptURL == nil {
		return nil, Errorf(CodeUnsupported, "transfers need email on (TIX_MAIL_SENDER) and the API's public URL (TIX_PUBLIC_URL) "+
			"for the recipient's accept link; ask the operator to set both")
	}
	st, o, err := s.transferable(ctx, c.Tenant, number)
	if err != nil {
		return nil, err
	}
	token, hash := newTransferToken()
	tr := &Transfer{ID: newID("trf_", 20), OrganizerID: c.OrganizerID, Environment: c.Environment, TicketNumber: st.Number,
		OrderID: o.ID, EventID: o.EventID, ToEmail: req.ToEmail, ToName: req.ToName, Status: TransferPending,
		TokenHash: hash, KeyID: c.KeyID, CreatedAt: s.Orders.now()}
	if err := s.Store.CreateTransfer(ctx, tr); err != nil {
		if errors.Is(err, ErrTicketLocked) {
			return nil, s.lockedNow(ctx, c.Tenant, st.Number, "transferred")
		}
		return nil, err
	}
	if err := s.Offers.TransferOffer(ctx, tr, o.EventTitle, s.AcceptURL(tr.ID, token)); err != nil {
		// Without its email the transfer could never be accepted: undone.
		if cerr := s.Store.CancelTransfer(context.WithoutCancel(ctx), s.cancelled(tr)); cerr != nil {
			slog.WarnContext(ctx, "cancel a transfer whose email was not written", "transfer_id", tr.ID, "error", cerr)
		}
		return nil, err
	}
	return tr, nil
}

// transferable reads the tenant's ticket number and its order and says
// why it cannot be transferred, if it cannot.
func (s *Transfers) transferable(ctx context.Context, t Tenant, number string) (TicketState, *Order, error) {
	number = strings.ToUpper(strings.TrimSpace(number))
	if !validTicketNumber(number) {
		return TicketState{}, nil, NotFound("ticket " + number)
	}
	states, err := s.Door.DoorStates(ctx, t.Environment, []string{number})
	if err != nil {
		return TicketState{}, nil, err
	}
	st := states[number]
	if !st.Found || st.OrganizerID != t.OrganizerID {
		return st, nil, NotFound("ticket " + number)
	}
	if st.Tickets != nil {
		return st, nil, Invalid("ticket_number", "%s is an order's number; transfer its tickets one by one (GET /v1/orders/%s/tickets lists them)", number, st.OrderID)
	}
	o, err := s.Orders.load(ctx, t, st.OrderID)
	if err != nil {
		return st, nil, err
	}
	switch {
	case o.Status != OrderPaid:
		return st, nil, Errorf(CodeConflict, "ticket %s belongs to order %s, which is %s; only a paid order's tickets can be transferred", number, o.ID, o.Status)
	case o.Refund != nil:
		return st, nil, Errorf(CodeConflict, "a refund of order %s is in progress; its tickets cannot be transferred", o.ID)
	}
	if err := lockedError(st, "transferred"); err != nil {
		return st, nil, err
	}
	return st, o, nil
}

// lockedNow reads why number's door state refused a write just now.
func (s *Transfers) lockedNow(ctx context.Context, t Tenant, number, doing string) error {
	states, err := s.Door.DoorStates(ctx, t.Environment, []string{number})
	if err != nil {
		return err
	}
	if err := lockedError(states[number], doing); err != nil {
		return err
	}
	return Errorf(CodeConflict, "ticket %s changed meanwhile; retry", number)
}

// Get is GET /v1/transfers/{id}.
func (s *Transfers) Get(ctx context.Context, t Tenant, id string) (*Transfer, error) {
	tr, err := s.Store.GetTransfer(ctx, id)
	if err != nil {
		return nil, err
	}
	if tr.OrganizerID != t.OrganizerID || tr.Environment != t.Environment {
		return nil, NotFound("transfer")
	}
	return tr, nil
}

// Cancel is DELETE /v1/transfers/{id}: a pending transfer is cancelled (its
// link stops working, the ticket is its holder's as before); cancelling a
// cancelled one answers it again; an accepted one is 409.
func (s *Transfers) Cancel(ctx context.Context, t Tenant, id string) (*Transfer, error) {
	for range 3 {
		tr, err := s.Get(ctx, t, id)
		if err != nil {
			return nil, err
		}
		switch tr.Status {
		case TransferCancelled:
			return tr, nil
		case TransferAccepted:
			return nil, Errorf(CodeConflict, "%s was accepted: the ticket was re-issued as %s (order %s) and cannot be taken back",
				tr.describe(), tr.NewTicketNumber, tr.NewOrderID)
		}
		n := s.cancelled(tr)
		if err := s.Store.CancelTransfer(ctx, n); errors.Is(err, ErrStateChanged) {
			continue // accepted or cancelled meanwhile: answer from the new state
		} else if err != nil {
			return nil, err
		}
		return n, nil
	}
	return nil, Errorf(CodeConflict, "transfer %s changed concurrently; retry", id)
}

// cancelled is tr cancelled now.
func (s *Transfers) cancelled(tr *Transfer) *Transfer {
	n := *tr
	now := s.Orders.now()
	n.Status, n.CancelledAt = TransferCancelled, &now
	return &n
}

// Offer is what the accept page shows: the transfer whose link this is
// (not_found for any other secret) and its ticket.
func (s *Transfers) Offer(ctx context.Context, id, token string) (*Transfer, *Order, *Ticket, error) {
	tr, err := s.Store.GetTransfer(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if !tr.tokenMatches(token) {
		return nil, nil, nil, NotFound("transfer")
	}
	o, err := s.Orders.OrderStore.GetOrder(ctx, tr.OrderID)
	if err != nil {
		return nil, nil, nil, err
	}
	tk, _, ok := ticketOf(o, tr.TicketNumber)
	if !ok {
		return nil, nil, nil, NotFound("ticket " + tr.TicketNumber)
	}
	return tr, o, &tk, nil
}

// Accept is the recipient accepting with the link's secret: the ticket is
// re-issued to them as a new, transferred-in order, in one transaction
// that also marks the old ticket transferred (its code stops admitting)
// and the transfer accepted, so the link works once; a check-in or a
// refund of the old ticket racing it, or a second accept, cannot both win.
func (s *Transfers) Accept(ctx context.Context, id, token string) (*Transfer, *Order, error) {
	tr, _, tk, err := s.Offer(ctx, id, token)
	if err != nil {
		return nil, nil, err
	}
	if err := pendingError(tr); err != nil {
		return nil, nil, err
	}
	t := Tenant{OrganizerID: tr.OrganizerID, Environment: tr.Environment}
	from, err := s.Orders.load(ctx, t, tr.OrderID)
	if err != nil {
		return nil, nil, err
	}
	if from.Status != OrderPaid || from.Refund != nil {
		return nil, nil, Errorf(CodeConflict, "order %s of ticket %s is %s; the ticket cannot be transferred", from.ID, tr.TicketNumber, from.Status)
	}
	_, line, _ := ticketOf(from, tr.TicketNumber)
	for attempt := 0; ; attempt++ {
		now := s.Orders.now()
		n := transferredOrder(tr, from, line, tk.Seat, now)
		n.TicketNumber, n.Tickets = issueTickets(n)
		acc := *tr
		acc.Status, acc.AcceptedAt, acc.NewOrderID, acc.NewTicketNumber = TransferAccepted, &now, n.ID, n.Tickets[0].Number
		ev := transferEvent(&acc, n, now)
		err := s.Store.AcceptTransfer(ctx, &acc, n, ev)
		switch {
		case errors.Is(err, ErrTicketNumberTaken) && attempt < 5:
			continue
		case errors.Is(err, ErrStateChanged):
			return nil, nil, s.acceptRefused(ctx, id)
		case errors.Is(err, ErrTicketLocked):
			return nil, nil, s.lockedNow(ctx, t, tr.TicketNumber, "transferred")
		case err != nil:
			return nil, nil, err
		}
		s.Orders.publish(ctx, ev)
		return &acc, n, nil
	}
}

// pendingError says why a transfer that is not pending cannot be accepted.
func pendingError(tr *Transfer) error {
	switch tr.Status {
	case TransferAccepted:
		return Errorf(CodeConflict, "%s was already accepted; the new ticket %s was emailed to its recipient", tr.describe(), tr.NewTicketNumber)
	case TransferCancelled:
		return Errorf(CodeConflict, "%s was cancelled by the organizer; the ticket stays with its holder", tr.describe())
	}
	return nil
}

// acceptRefused reads a transfer that stopped being pending during accept.
func (s *Transfers) acceptRefused(ctx context.Context, id string) error {
	tr, err := s.Store.GetTransfer(ctx, id)
	if err != nil {
		return err
	}
	if err := pendingError(tr); err != nil {
		return err
	}
	return Errorf(CodeConflict, "transfer %s changed meanwhile; retry", id)
}
