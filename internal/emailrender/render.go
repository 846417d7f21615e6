// Package emailrender is what tix's emails say: a paid order's tickets, a
// refund's confirmation and the organizers' alerts, in Russian and English
// (HTML and text templates, a QR image per ticket, the tickets' PDF), and
// the emailjobs.Renderer over them (Renderer; TextRenderer for tests). Only
// the deliver function links it (internal/app/sending).
package emailrender

import (
	"bytes"
	"embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"
	_ "time/tzdata" // Lambda's runtime has no zoneinfo; events start in their own zone

	"tix/internal/emailsend"
)

// Organizer is who sold the tickets, as the buyer sees it.
type Organizer struct {
	Name     string // sender name and "sold by"
	ReplyTo  string // reply-to address ("" = none)
	Support  string // how to get help: an address, a phone or a URL
	LogoURL  string // https URL of the logo ("" = none)
	Language string // "ru" | "en"
}

// Event is what the tickets admit to.
type Event struct {
	Title    string
	Venue    string
	City     string
	Start    time.Time
	TimeZone string // IANA zone of the venue, e.g. Europe/Moscow
}

// Money is an amount in minor units (kopecks for RUB) and its ISO currency.
type Money struct {
	Minor    int64
	Currency string
}

// TicketInfo is one ticket of the order.
type TicketInfo struct {
	Number string
	Seat   *Seat // nil for general admission
	// QR is the payload the ticket's QR code encodes (what the door scans).
	QR string
}

// Seat is a ticket's place.
type Seat struct {
	Label, Zone, Row string
	Number           int // 0 = none
}

// TicketsEmail is the email a paid order's buyer receives.
type TicketsEmail struct {
	To        string
	Organizer Organizer
	Event     Event
	OrderID   string
	Total     Money
	Tickets   []TicketInfo
	// Test marks a test-mode order's email: TEST in the subject, both parts,
	// every PDF page and every QR code, whose payload should say so too
	// (ticketing.Order.TicketQRFor does).
	Test bool
}

// RefundEmail confirms a completed refund to the buyer.
type RefundEmail struct {
	To        string
	Organizer Organizer
	Event     Event
	OrderID   string
	Amount    Money
	Tickets   []TicketInfo // the refunded tickets (numbers only are shown)
	Test      bool         // a test-mode order's: TEST in the subject and both parts
}

//go:embed templates
var templateFS embed.FS

var (
	textTemplates = texttemplate.Must(texttemplate.New("").ParseFS(templateFS, "templates/*.txt"))
	htmlTemplates = htmltemplate.Must(htmltemplate.New("").Funcs(htmltemplate.FuncMap{
		// cid is an inline image's address; html/template would blank the scheme.
		"cid":  func(id string) htmltemplate.URL { return htmltemplate.URL("cid:" + id) },
		"dict": dict,
	}).ParseFS(templateFS, "templates/*.html"))
)

// lang is a supported template language.
func lang(l string) (string, error) {
	switch l {
	case "ru", "en":
		return l, nil
	case "":
		return "ru", nil
	}
	return "", fmt.Errorf("mail: unsupported language %q (ru or en)", l)
}

// render executes name.<lang>.txt and name.<lang>.html with data.
func render(name, l string, data any) (text, html string, err error) {
	var t, h bytes.Buffer
	if err := textTemplates.ExecuteTemplate(&t, name+"."+l+".txt", data); err != nil {
		return "", "", fmt.Errorf("mail: render %s text: %w", name, err)
	}
	if err := htmlTemplates.ExecuteTemplate(&h, name+"."+l+".html", data); err != nil {
		return "", "", fmt.Errorf("mail: render %s html: %w", name, err)
	}
	return strings.TrimSpace(t.String()) + "\n", h.String(), nil
}

// ticketView is a ticket as the templates show it.
type ticketView struct {
	Number, Seat, CID string
}

// view is what the tickets and refund templates read.
type view struct {
	Org     Organizer
	Event   Event
	Start   string
	OrderID string
	Total   string
	Tickets []ticketView
	// TestNotice is the test-mode banner ("" for a live order's email).
	TestNotice string
}

// TestSubject is a test-mode email's subject.
func TestSubject(s string) string { return "[TEST] " + s }

// TestNotice is the line a test-mode email opens with, in language l.
func TestNotice(l string) string {
	if l == "ru" {
		return "TEST · ТЕСТ: письмо тестового режима. Оплаты не было, билеты недействительны и на вход не пропускают."
	}
	return "TEST: an email of test mode. Nothing was paid; these tickets are not valid and admit no one."
}

// withTest marks a rendered email as a test-mode one when test is set.
func withTest(m emailsend.Message, test bool, l string) emailsend.Message {
	if test {
		m.Subject = TestSubject(m.Subject)
		m.Text = TestNotice(l) + "\n\n" + m.Text
	}
	return m
}

func newView(org Organizer, ev Event, orderID string, total Money, tickets []TicketInfo, l string) (view, error) {
	if org.Name == "" || ev.Title == "" || orderID == "" {
		return view{}, fmt.Errorf("mail: an email needs the organizer's name, the event's title and the order id")
	}
	start, err := FormatStart(ev.Start, ev.TimeZone, l)
	if err != nil {
		return view{}, err
	}
	v := view{Org: org, Event: ev, Start: start, OrderID: orderID, Total: FormatMoney(total, l)}
	for i, t := range tickets {
		v.Tickets = append(v.Tickets, ticketView{Number: t.Number, Seat: seatText(t.Seat, l), CID: qrCID(i)})
	}
	return v, nil
}

// qrCID is the Content-ID of the i-th ticket's QR image.
func qrCID(i int) string { return fmt.Sprintf("qr-%d@tix", i+1) }

// RenderTickets builds the paid order's email: both parts, one inline QR
// image per ticket and the tickets' PDF, one ticket a page.
func RenderTickets(e TicketsEmail) (emailsend.Message, error) {
	l, err := lang(e.Organizer.Language)
	if err != nil {
		return emailsend.Message{}, err
	}
	if len(e.Tickets) == 0 {
		return emailsend.Message{}, fmt.Errorf("mail: an order without tickets has no tickets email")
	}
	v, err := newView(e.Organizer, e.Event, e.OrderID, e.Total, e.Tickets, l)
	if err != nil {
		return emailsend.Message{}, err
	}
	if e.Test {
		v.TestNotice = TestNotice(l)
	}
	text, html, err := render("tickets", l, v)
	if err != nil {
		return emailsend.Message{}, err
	}
	m := withTest(emailsend.Message{FromName: e.Organizer.Name, ReplyTo: e.Organizer.ReplyTo, To: e.To,
		Subject: subject(l, "tickets", e.Event.Title), Text: text, HTML: html,
		Headers: map[string]string{"X-Tix-Order": e.OrderID, "X-Tix-Kind": "tickets"}}, e.Test, l)
	for i, t := range e.Tickets {
		png, err := qrPNG(t.QR, e.Test)
		if err != nil {
			return emailsend.Message{}, err
		}
		m.Inline = append(m.Inline, emailsend.Part{ContentID: qrCID(i), Filename: "ticket-" + t.Number + ".png", ContentType: "image/png", Data: png})
	}
	pdf, err := ticketsPDF(e, v, m.Inline, l)
	if err != nil {
		return emailsend.Message{}, err
	}
	m.Attachments = []emailsend.Part{{Filename: "tickets-" + e.OrderID + ".pdf", ContentType: "application/pdf", Data: pdf}}
	return m, nil
}

// RenderRefund builds a completed refund's confirmation.
func RenderRefund(e RefundEmail) (emailsend.Message, error) {
	l, err := lang(e.Organizer.Language)
	if err != nil {
		return emailsend.Message{}, err
	}
	v, err := newView(e.Organizer, e.Event, e.OrderID, e.Amount, e.Tickets, l)
	if err != nil {
		return emailsend.Message{}, err
	}
	if e.Test {
		v.TestNotice = TestNotice(l)
	}
	text, html, err := render("refund", l, v)
	if err != nil {
		return emailsend.Message{}, err
	}
	return withTest(emailsend.Message{FromName: e.Organizer.Name, ReplyTo: e.Organizer.ReplyTo, To: e.To,
		Subject: subject(l, "refund", e.Event.Title), Text: text, HTML: html,
		Headers: map[string]string{"X-Tix-Order": e.OrderID, "X-Tix-Kind": "refund"}}, e.Test, l), nil
}

func subject(l, kind, title string) string {
	s := map[string]string{
		"ru/tickets": "Ваши билеты: %s", "en/tickets": "Your tickets: %s",
		"ru/refund": "Возврат оформлен: %s", "en/refund": "Your refund is complete: %s",
	}[l+"/"+kind]
	return fmt.Sprintf(s, title)
}

// seatText is a seat in words ("" for general admission).
func seatText(s *Seat, l string) string {
	if s == nil {
		return ""
	}
	words := map[string][2]string{"ru": {"ряд", "место"}, "en": {"row", "seat"}}[l]
	var parts []string
	if s.Zone != "" {
		parts = append(parts, s.Zone)
	}
	if s.Row != "" {
		parts = append(parts, words[0]+" "+s.Row)
	}
	if s.Number != 0 {
		parts = append(parts, fmt.Sprintf("%s %d", words[1], s.Number))
	}
	if len(parts) == 0 {
		return s.Label
	}
	return strings.Join(parts, ", ")
}

// dict builds a map from key, value pairs, for a template's sub-template.
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return m
}
