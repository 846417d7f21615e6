package email

import (
	"strconv"
	"strings"

	"tix/internal/clock"
	"tix/internal/mail"
)

// MailRenderer renders the pipeline's emails with internal/mail's templates:
// HTML and text in the organizer's language, one QR image per ticket and
// the tickets' PDF.
type MailRenderer struct{}

var _ Renderer = MailRenderer{}

func organizer(id Identity, lang string) mail.Organizer {
	return mail.Organizer{Name: id.From(), ReplyTo: id.ReplyTo, Support: id.Support, LogoURL: id.LogoURL, Language: lang}
}

func event(e EventInfo) mail.Event {
	return mail.Event{Title: e.Title, Venue: e.Venue, City: e.City, Start: e.StartsAt, TimeZone: e.Timezone}
}

func tickets(ts []TicketInfo) []mail.TicketInfo {
	out := make([]mail.TicketInfo, len(ts))
	for i, t := range ts {
		out[i] = mail.TicketInfo{Number: t.Number, QR: t.QRPayload}
		if s := t.SeatRef; s != nil {
			seat := &mail.Seat{Label: s.Label, Zone: s.ZoneName}
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
func (MailRenderer) Tickets(d TicketsData) (mail.Message, error) {
	return mail.RenderTickets(mail.TicketsEmail{To: d.To, Organizer: organizer(d.Organizer, d.Lang), Event: event(d.Event),
		OrderID: d.OrderID, Total: mail.Money{Minor: d.Total, Currency: d.Currency}, Tickets: tickets(d.Tickets), Test: d.Test})
}

// Refund renders a completed refund's confirmation.
func (MailRenderer) Refund(d RefundData) (mail.Message, error) {
	return mail.RenderRefund(mail.RefundEmail{To: d.To, Organizer: organizer(d.Organizer, d.Lang), Event: event(d.Event),
		OrderID: d.OrderID, Amount: mail.Money{Minor: d.Amount, Currency: d.Currency}, Tickets: tickets(d.Tickets), Test: d.Test})
}

// Alert renders an owner alert.
func (MailRenderer) Alert(d AlertData) (mail.Message, error) {
	a := d.Alert
	fields := map[string]string{"endpoint_id": a.EndpointID, "url": a.URL, "failures": strings.Join(a.LastErrors, "\n"),
		"key_id": a.KeyID, "ips": strconv.Itoa(a.DistinctIPs), "limit": strconv.Itoa(a.Limit), "day": a.Day,
		"revoked_at": clock.Format(a.At), "order_id": a.OrderID, "payment_id": a.PaymentID, "bucket": a.Bucket}
	m, err := mail.RenderAlert(a.Cause, fields, d.Lang)
	if err != nil {
		return mail.Message{}, err
	}
	m.To, m.FromName = d.To, "tix"
	return m, nil
}
