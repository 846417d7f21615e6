package emailrender

import (
	"strconv"
	"strings"

	"tix/internal/clock"
	"tix/internal/emailjobs"
	"tix/internal/emailsend"
)

// Renderer is the email pipeline's renderer (emailjobs.Renderer) over this
// package's templates:
// HTML and text in the organizer's language, one QR image per ticket and
// the tickets' PDF.
type Renderer struct{}

var _ emailjobs.Renderer = Renderer{}

func organizer(id emailjobs.Identity, lang string) Organizer {
	return Organizer{Name: id.From(), ReplyTo: id.ReplyTo, Support: id.Support, LogoURL: id.LogoURL, Language: lang}
}

func event(e emailjobs.EventInfo) Event {
	return Event{Title: e.Title, Venue: e.Venue, City: e.City, Start: e.StartsAt, TimeZone: e.Timezone}
}

func tickets(ts []emailjobs.TicketInfo) []TicketInfo {
	out := make([]TicketInfo, len(ts))
	for i, t := range ts {
		out[i] = TicketInfo{Number: t.Number, QR: t.QRPayload}
		if s := t.SeatRef; s != nil {
			seat := &Seat{Label: s.Label, Zone: s.ZoneName}
			if s.Row != nil {
				seat.Row = *s.Row
			}
			if s.Number != nil {
				seat.Number = *s.Number
			}
			out[i].Seat = seat
		}
	}
	return out
}

// Tickets renders a paid order's tickets email.
func (Renderer) Tickets(d emailjobs.TicketsData) (emailsend.Message, error) {
	return RenderTickets(TicketsEmail{To: d.To, Organizer: organizer(d.Organizer, d.Lang), Event: event(d.Event),
		OrderID: d.OrderID, Total: Money{Minor: d.Total, Currency: d.Currency}, Tickets: tickets(d.Tickets), Test: d.Test})
}

// Refund renders a completed refund's confirmation.
func (Renderer) Refund(d emailjobs.RefundData) (emailsend.Message, error) {
	return RenderRefund(RefundEmail{To: d.To, Organizer: organizer(d.Organizer, d.Lang), Event: event(d.Event),
		OrderID: d.OrderID, Amount: Money{Minor: d.Amount, Currency: d.Currency}, Tickets: tickets(d.Tickets), Test: d.Test})
}

// Alert renders an owner alert.
func (Renderer) Alert(d emailjobs.AlertData) (emailsend.Message, error) {
	a := d.Alert
	fields := map[string]string{"endpoint_id": a.EndpointID, "url": a.URL, "failures": strings.Join(a.LastErrors, "\n"),
		"key_id": a.KeyID, "ips": strconv.Itoa(a.DistinctIPs), "limit": strconv.Itoa(a.Limit), "day": a.Day,
		"revoked_at": clock.Format(a.At), "order_id": a.OrderID, "payment_id": a.PaymentID, "bucket": a.Bucket, "key": a.Key, "email": d.To,
		"event": a.Event, "ticket": a.Ticket}
	m, err := RenderAlert(a.Cause, fields, d.Lang)
	if err != nil {
		return emailsend.Message{}, err
	}
	m.To, m.FromName = d.To, "tix"
	return m, nil
}
