package ticketing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Ticket transfers (docs/transfers.md): a pending transfer of one ticket to
// a recipient, who accepts it from the link emailed to them; accepting
// re-issues the ticket as a new order whose payment is transferred-in.

// TicketTransferred is the status of a ticket re-issued to someone else.
const TicketTransferred = "transferred"

// ResultTransferred is the door's answer for a transferred ticket's code:
// the ticket was re-issued under another number, and only that one admits.
const ResultTransferred = "transferred"

// PaymentTransferIn is the payment provider of a transferred-in order: it
// carries no money (the money stays with the order the ticket came from).
const PaymentTransferIn = "transfer_in"

// EventTicketTransferred is the webhook type of an accepted transfer
// (an endpoint receives it only when it subscribes to it).
const EventTicketTransferred = "ticket.transferred"

// TransferStatus is a transfer's state: pending, then accepted or cancelled.
type TransferStatus string

// Transfer statuses.
const (
	TransferPending   TransferStatus = "pending"
	TransferAccepted  TransferStatus = "accepted"
	TransferCancelled TransferStatus = "cancelled"
)

// Transfer is one ticket offered to a recipient.
type Transfer struct {
	ID           string         `json:"id"` // trf_...
	OrganizerID  string         `json:"organizer_id"`
	Environment  Environment    `json:"environment"`
	TicketNumber string         `json:"ticket_number"`
	OrderID      string         `json:"order_id"`
	EventID      string         `json:"event_id"`
	ToEmail      string         `json:"to_email"`
	ToName       *string        `json:"to_name,omitempty"`
	Status       TransferStatus `json:"status"`
	// TokenHash is the hex SHA-256 of the accept link's secret; the secret
	// itself is kept nowhere but in the recipient's email.
	TokenHash       string     `json:"token_hash"`
	KeyID           string     `json:"key_id"`
	CreatedAt       time.Time  `json:"created_at"`
	AcceptedAt      *time.Time `json:"accepted_at,omitempty"`
	CancelledAt     *time.Time `json:"cancelled_at,omitempty"`
	NewOrderID      string     `json:"new_order_id,omitempty"`
	NewTicketNumber string     `json:"new_ticket_number,omitempty"`
	Version         int64      `json:"-"`
}

// TransferIn is where a transferred-in order's ticket came from.
type TransferIn struct {
	TransferID   string `json:"transfer_id"`
	OrderID      string `json:"order_id"`
	TicketNumber string `json:"ticket_number"`
}

// WebhookTransfer is an accepted transfer as the ticket.transferred webhook
// carries it (no personal data: the recipient's address is not in it).
type WebhookTransfer struct {
	ID              string `json:"id"`
	TicketNumber    string `json:"ticket_number"`
	FromOrderID     string `json:"from_order_id"`
	ToOrderID       string `json:"to_order_id"`
	NewTicketNumber string `json:"new_ticket_number"`
	AcceptedAt      string `json:"accepted_at"`
}

// ErrTicketLocked: a ticket's door state refused a write (admitted, locked
// for a refund, a transfer pending, or transferred); the caller reads the
// state to say which.
var ErrTicketLocked = errors.New("the ticket's door state refused the write")

// TransferStore keeps transfers beside the tickets' door state: every
// change is one transaction over the transfer and the ticket items, so a
// transfer, a check-in and a refund of one ticket exclude each other.
type TransferStore interface {
	// CreateTransfer writes tr (pending) and marks its ticket as having it
	// pending, in one transaction: only when the ticket is tr's
	// organizer's, a ticket (not an order-level number), not admitted, not
	// locked for a refund, with no transfer pending and not transferred
	// (else ErrTicketLocked).
	CreateTransfer(ctx context.Context, tr *Transfer) error
	// GetTransfer reads a transfer (strongly consistent); not_found.
	GetTransfer(ctx context.Context, id string) (*Transfer, error)
	// CancelTransfer writes tr (cancelled) over the pending transfer at
	// tr.Version and removes its mark from the ticket, in one transaction;
	// ErrStateChanged when it is no longer pending.
	CancelTransfer(ctx context.Context, tr *Transfer) error
	// AcceptTransfer moves a pending tr (at its Version) to accepted, marks
	// its ticket transferred (only while it carries tr's mark, not
	// admitted, not locked for a refund) and out of its event's counts,
	// writes o (paid, transferred-in), its ticket numbers and ev, in one
	// transaction. ErrStateChanged: the transfer is no longer pending;
	// ErrTicketLocked: the ticket refused; ErrTicketNumberTaken: a new
	// number exists (draw again).
	AcceptTransfer(ctx context.Context, tr *Transfer, o *Order, ev *OrderEvent) error
}

// newTransferToken is an accept link's secret (256 random bits) and its hash.
func newTransferToken() (token, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails (Go 1.24+)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, tokenHash(token)
}

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// tokenMatches compares a presented secret with the stored hash in constant time.
func (tr *Transfer) tokenMatches(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(tokenHash(token)), []byte(tr.TokenHash)) == 1
}

// Webhook is the accepted transfer as webhooks carry it.
func (tr *Transfer) Webhook() *WebhookTransfer {
	w := &WebhookTransfer{ID: tr.ID, TicketNumber: tr.TicketNumber, FromOrderID: tr.OrderID,
		ToOrderID: tr.NewOrderID, NewTicketNumber: tr.NewTicketNumber}
	if tr.AcceptedAt != nil {
		w.AcceptedAt = tr.AcceptedAt.UTC().Format(time.RFC3339)
	}
	return w
}

// lockedError says why a ticket's door state refuses what was asked
// (doing: "transferred", "refunded"); nil when nothing refuses it.
func lockedError(st TicketState, doing string) error {
	switch {
	case st.CheckIn != nil:
		return Errorf(CodeConflict, "ticket %s was admitted at the door (%s, gate %s); a used ticket cannot be %s",
			st.Number, st.CheckIn.At.UTC().Format(time.RFC3339), st.CheckIn.Gate, doing)
	case st.TransferredTo != "":
		return Errorf(CodeConflict, "ticket %s was transferred to someone else; it cannot be %s", st.Number, doing)
	case st.TransferID != "":
		return Errorf(CodeConflict, "ticket %s has a pending transfer (%s); cancel it first (DELETE /v1/transfers/%s) if it should be %s",
			st.Number, st.TransferID, st.TransferID, doing)
	case st.RefundID != "":
		return Errorf(CodeConflict, "ticket %s is refunded or being refunded; it cannot be %s", st.Number, doing)
	}
	return nil
}

// ticketOf is the ticket numbered number of o and the line it was issued
// for (tickets are issued line by line, a unit at a time: issueTickets).
func ticketOf(o *Order, number string) (Ticket, OrderLine, bool) {
	i := 0
	for _, l := range o.Lines {
		for range l.Quantity {
			if i < len(o.Tickets) && o.Tickets[i].Number == number {
				return o.Tickets[i], l, true
			}
			i++
		}
	}
	return Ticket{}, OrderLine{}, false
}

// transferredOrder is the order a transfer re-issues its ticket as: paid,
// one ticket of the same event, seat and tier, to the recipient, its
// payment transferred-in (no money: price 0).
func transferredOrder(tr *Transfer, from *Order, line OrderLine, seat *SeatRef, now time.Time) *Order {
	n := &Order{
		ID: newID("ord_", 20), OrganizerID: from.OrganizerID, Environment: from.Environment, Type: OrderTypeTicket,
		Status: OrderPaid, EventID: from.EventID, EventTitle: from.EventTitle, OccurrenceID: from.OccurrenceID,
		Lines:    []OrderLine{{TierID: line.TierID, TierName: line.TierName, Quantity: 1, Seated: line.Seated, Seat: seat}},
		Quantity: 1, Currency: from.Currency,
		Buyer: Buyer{Email: tr.ToEmail, Name: tr.ToName}, KeyID: tr.KeyID, IdempotencyKey: "transfer:" + tr.ID,
		Payment:   &Payment{Provider: PaymentTransferIn, ID: tr.ID},
		CreatedAt: now, ExpiresAt: now, PaidAt: &now,
		TransferredFrom: &TransferIn{TransferID: tr.ID, OrderID: from.ID, TicketNumber: tr.TicketNumber},
	}
	return n
}

// transferEvent is the outbox event of an accepted transfer: the new order,
// with the transfer.
func transferEvent(tr *Transfer, n *Order, now time.Time) *OrderEvent {
	ev := newEvent(EventTicketTransferred, n, now)
	ev.Transfer = tr.Webhook()
	return ev
}

// describe names a transfer in an error.
func (tr *Transfer) describe() string {
	return fmt.Sprintf("transfer %s of ticket %s", tr.ID, tr.TicketNumber)
}
