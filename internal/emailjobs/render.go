package emailjobs

import (
	"time"

	"tix/internal/emailsend"
	"tix/internal/ticketing"
)

// Renderer turns what an email says into a message (internal/emailrender
// implements it with the templates, the QR codes and the PDF). It sets Subject, the parts,
// inline images and attachments; the service sets From, Reply-To, To and the
// headers.
type Renderer interface {
	Tickets(d TicketsData) (emailsend.Message, error)
	Refund(d RefundData) (emailsend.Message, error)
	Alert(d AlertData) (emailsend.Message, error)
}

// TicketsData is everything a paid order's tickets email shows.
type TicketsData struct {
	To        string
	Lang      string // ru | en
	Organizer Identity
	Event     EventInfo
	OrderID   string
	Total     int64 // minor units
	Currency  string
	Tickets   []TicketInfo
	Resend    bool // sent again on request
	Test      bool // a test-mode order's: marked TEST everywhere, never a live ticket
}

// EventInfo is the event as the email shows it.
type EventInfo struct {
	Title, Venue, City string
	StartsAt           time.Time
	Timezone           string // IANA; the start is shown in it
}

// Local is the start in the event's time zone (UTC if it is unknown).
func (e EventInfo) Local() time.Time {
	if loc, err := time.LoadLocation(e.Timezone); err == nil && e.Timezone != "" {
		return e.StartsAt.In(loc)
	}
	return e.StartsAt.UTC()
}

// TicketInfo is one ticket: its number, seat and the QR code's payload.
type TicketInfo struct {
	Number    string
	Seat      string             // the seat's label, "" for general admission
	SeatRef   *ticketing.SeatRef // the whole seat (zone, row, number), nil for general admission
	QRPayload string
}

// RefundData is a completed refund's confirmation.
type RefundData struct {
	To        string
	Lang      string
	Organizer Identity
	Event     EventInfo
	OrderID   string
	Amount    int64
	Currency  string
	Tickets   []TicketInfo // the refunded tickets
	Test      bool         // a test-mode order's: marked TEST
}

// AlertData is an owner alert.
type AlertData struct {
	To        string
	Lang      string
	Organizer Identity
	Alert     Alert
}
