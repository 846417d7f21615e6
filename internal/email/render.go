package email

import (
	"fmt"
	"strings"
	"time"

	"tix/internal/mail"
	"tix/internal/ticketing"
)

// Renderer turns what an email says into a message (the mail package's
// templates; TextRenderer until they are wired). It sets Subject, the parts,
// inline images and attachments; the service sets From, Reply-To, To and the
// headers.
type Renderer interface {
	Tickets(d TicketsData) (mail.Message, error)
	Refund(d RefundData) (mail.Message, error)
	Alert(d AlertData) (mail.Message, error)
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

// TextRenderer is a plain-text renderer: every fact, no images or PDF.
type TextRenderer struct{}

func money(v int64, cur string) string { return fmt.Sprintf("%d.%02d %s", v/100, v%100, cur) }

func (TextRenderer) Tickets(d TicketsData) (mail.Message, error) {
	var b strings.Builder
	ru := d.Lang == "ru"
	subject := "Your tickets: " + d.Event.Title
	if ru {
		subject = "Ваши билеты: " + d.Event.Title
	}
	if d.Test {
		subject = mail.TestSubject(subject)
		b.WriteString(mail.TestNotice(d.Lang) + "\n")
	}
	fmt.Fprintf(&b, "%s\n%s, %s\n%s\n", d.Event.Title, d.Event.Venue, d.Event.City, d.Event.Local().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Order %s, total %s\n", d.OrderID, money(d.Total, d.Currency))
	for _, t := range d.Tickets {
		fmt.Fprintf(&b, "Ticket %s %s (code %s)\n", t.Number, t.Seat, t.QRPayload)
	}
	fmt.Fprintf(&b, "Sold by %s. Help: %s\n", d.Organizer.Name, d.Organizer.Support)
	return mail.Message{Subject: subject, Text: b.String()}, nil
}

func (TextRenderer) Refund(d RefundData) (mail.Message, error) {
	subject := "Refund: " + d.Event.Title
	if d.Lang == "ru" {
		subject = "Возврат: " + d.Event.Title
	}
	text := fmt.Sprintf("Order %s: %s refunded.\nSold by %s. Help: %s\n", d.OrderID, money(d.Amount, d.Currency), d.Organizer.Name, d.Organizer.Support)
	if d.Test {
		subject, text = mail.TestSubject(subject), mail.TestNotice(d.Lang)+"\n"+text
	}
	return mail.Message{Subject: subject, Text: text}, nil
}

func (TextRenderer) Alert(d AlertData) (mail.Message, error) {
	a := d.Alert
	text := fmt.Sprintf("%s at %s\n", a.Cause, a.At.UTC().Format(time.RFC3339))
	switch a.Cause {
	case CauseEndpointDisabled:
		text += fmt.Sprintf("Endpoint %s (%s) was disabled: %s after %d failures.\nLast failures:\n  %s\n",
			a.EndpointID, a.URL, a.Reason, a.Failures, strings.Join(a.LastErrors, "\n  "))
	case CauseLiveKeyRevoked:
		text += fmt.Sprintf("Live key %s was revoked.\n", a.KeyID)
	case CausePartlyRefundedOutside:
		text += fmt.Sprintf("Order %s (payment %s) was partly refunded at the bank, outside tix; it stays paid.\n", a.OrderID, a.PaymentID)
	case CauseKeyManyIPs:
		text += fmt.Sprintf("Key %s was used from %d distinct IPs today.\n", a.KeyID, a.DistinctIPs)
	case CauseKeyCeiling:
		text += fmt.Sprintf("Publishable key %s reached its ceiling of %d %s requests per window.\n", a.KeyID, a.Limit, a.Bucket)
	}
	return mail.Message{Subject: "tix alert: " + a.Cause, Text: text}, nil
}
