package api

import (
	"context"
	"net/http"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// Ticket transfers (docs/transfers.md): the organizer's server offers a
// ticket to a recipient, who accepts it on a small page the link of their
// email opens (transfer_page.go).

// Transfers is what the API needs of ticket transfers (ticketing.Transfers).
type Transfers interface {
	Create(ctx context.Context, c ticketing.Caller, number string, req ticketing.TransferRequest) (*ticketing.Transfer, error)
	Get(ctx context.Context, t ticketing.Tenant, id string) (*ticketing.Transfer, error)
	Cancel(ctx context.Context, t ticketing.Tenant, id string) (*ticketing.Transfer, error)
	Offer(ctx context.Context, id, token string) (*ticketing.Transfer, *ticketing.Order, *ticketing.Ticket, error)
	Accept(ctx context.Context, id, token string) (*ticketing.Transfer, *ticketing.Order, error)
}

// EnableTransfers serves the transfer routes over tr (app.EnableDoor wires
// it where the door is).
func (s *Server) EnableTransfers(tr Transfers) {
	s.Transfers = tr
	s.transferRoutes = []*route{
		{method: "POST", pattern: "/tickets/{ticket_number}/transfers", group: GroupOrders, scope: auth.ScopeOrdersWrite, skOnly: true,
			bucket: bucketWrite, handle: s.createTransfer},
		{method: "GET", pattern: "/transfers/{id}", group: GroupOrders, scope: auth.ScopeOrdersWrite, skOnly: true, handle: s.getTransfer},
		{method: "DELETE", pattern: "/transfers/{id}", group: GroupOrders, scope: auth.ScopeOrdersWrite, skOnly: true, bucket: bucketWrite,
			handle: s.cancelTransfer},
		// The recipient's page: no key, the link's secret is the credential.
		{method: "GET", pattern: "/transfers/{id}/accept", group: GroupOrders, public: true, query: []string{"token"}, handle: s.transferPage},
		{method: "POST", pattern: "/transfers/{id}/accept", group: GroupOrders, public: true, handle: s.acceptTransfer},
	}
}

type transferToJSON struct {
	Email string  `json:"email"`
	Name  *string `json:"name"`
}

type transferJSON struct {
	ID              string         `json:"id"`
	Status          string         `json:"status"`
	TicketNumber    string         `json:"ticket_number"`
	OrderID         string         `json:"order_id"`
	EventID         string         `json:"event_id"`
	To              transferToJSON `json:"to"`
	NewOrderID      *string        `json:"new_order_id"`
	NewTicketNumber *string        `json:"new_ticket_number"`
	CreatedAt       string         `json:"created_at"`
	AcceptedAt      *string        `json:"accepted_at"`
	CancelledAt     *string        `json:"cancelled_at"`
}

func renderTransfer(tr *ticketing.Transfer) transferJSON {
	return transferJSON{ID: tr.ID, Status: string(tr.Status), TicketNumber: tr.TicketNumber, OrderID: tr.OrderID, EventID: tr.EventID,
		To: transferToJSON{Email: tr.ToEmail, Name: tr.ToName}, NewOrderID: strPtr(tr.NewOrderID), NewTicketNumber: strPtr(tr.NewTicketNumber),
		CreatedAt: ts(tr.CreatedAt), AcceptedAt: tsPtr(tr.AcceptedAt), CancelledAt: tsPtr(tr.CancelledAt)}
}

func (s *Server) createTransfer(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		To *struct {
			Email string  `json:"email"`
			Name  *string `json:"name"`
		} `json:"to"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.To == nil {
		return ticketing.Invalid("to", "to is required: {\"to\":{\"email\":\"anna@example.com\"}}, the address the ticket goes to")
	}
	c := callerOf(r.Context())
	tr, err := s.Transfers.Create(r.Context(), ticketing.Caller{Tenant: c.tenant(), KeyID: c.key.ID}, r.PathValue("ticket_number"),
		ticketing.TransferRequest{ToEmail: req.To.Email, ToName: req.To.Name})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, renderTransfer(tr))
	return nil
}

func (s *Server) getTransfer(w http.ResponseWriter, r *http.Request) error {
	tr, err := s.Transfers.Get(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderTransfer(tr))
	return nil
}

func (s *Server) cancelTransfer(w http.ResponseWriter, r *http.Request) error {
	tr, err := s.Transfers.Cancel(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderTransfer(tr))
	return nil
}
