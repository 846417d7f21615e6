package emailrender

import (
	"bytes"
	"fmt"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"tix/internal/emailsend"
)

// pdfLabels are the PDF's words per language.
var pdfLabels = map[string]map[string]string{
	"ru": {"ticket": "Билет", "start": "Начало", "venue": "Место проведения", "seat": "Место",
		"ga": "Входной билет", "order": "Заказ", "sold": "Продавец", "help": "Помощь",
		"show": "Покажите QR-код на входе. Он действует один раз."},
	"en": {"ticket": "Ticket", "start": "Starts", "venue": "Venue", "seat": "Seat",
		"ga": "General admission", "order": "Order", "sold": "Sold by", "help": "Help",
		"show": "Show the QR code at the door. It admits once."},
}

// ticketsPDF lays out one ticket a page: event, start, venue, seat, number,
// QR, who sold it and how to get help. The Go fonts (embedded) cover Cyrillic.
// qrs are the tickets' QR images, the same as the email shows inline.
func ticketsPDF(e TicketsEmail, v view, qrs []emailsend.Part, l string) ([]byte, error) {
	w := pdfLabels[l]
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(time.Unix(0, 0).UTC()) // the same order renders the same bytes
	pdf.SetModificationDate(time.Unix(0, 0).UTC())
	if e.Test {
		pdf.SetTitle(TestSubject(e.Event.Title), true)
		pdf.SetSubject("TEST", false)
	} else {
		pdf.SetTitle(e.Event.Title, true)
	}
	pdf.SetAuthor(e.Organizer.Name, true)
	pdf.AddUTF8FontFromBytes("go", "", goregular.TTF)
	pdf.AddUTF8FontFromBytes("go", "B", gobold.TTF)
	pdf.SetMargins(20, 20, 20)
	pdf.SetAutoPageBreak(false, 0)
	for i, t := range e.Tickets {
		name := fmt.Sprintf("qr%d", i)
		pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(qrs[i].Data))
		pdf.AddPage()
		if e.Test {
			testBanner(pdf, l)
		}
		pdf.SetFont("go", "B", 22)
		pdf.MultiCell(0, 10, e.Event.Title, "", "L", false)
		pdf.Ln(2)
		line := func(label, value string) {
			pdf.SetFont("go", "B", 11)
			pdf.CellFormat(45, 7, label, "", 0, "L", false, 0, "")
			pdf.SetFont("go", "", 11)
			pdf.MultiCell(0, 7, value, "", "L", false)
		}
		line(w["start"], v.Start)
		line(w["venue"], joinNonEmpty(e.Event.Venue, e.Event.City))
		seat := v.Tickets[i].Seat
		if seat == "" {
			seat = w["ga"]
		}
		line(w["seat"], seat)
		line(w["ticket"], t.Number)
		line(w["order"], e.OrderID)
		y := pdf.GetY() + 6
		pdf.ImageOptions(name, 55, y, 100, 100, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
		pdf.SetXY(20, y+104)
		pdf.SetFont("go", "", 10)
		pdf.MultiCell(0, 6, w["show"], "", "C", false)
		pdf.Ln(6)
		line(w["sold"], e.Organizer.Name)
		if e.Organizer.Support != "" {
			line(w["help"], e.Organizer.Support)
		}
	}
	var out bytes.Buffer
	if err := pdf.Output(&out); err != nil {
		return nil, fmt.Errorf("mail: tickets PDF: %w", err)
	}
	return out.Bytes(), nil
}

// testBanner heads a test ticket's page with a red band: TEST in the core
// Helvetica (plain text in the page) and the notice in the page's language.
func testBanner(pdf *fpdf.Fpdf, l string) {
	pdf.SetFillColor(185, 28, 28)
	pdf.Rect(0, 0, 210, 18, "F")
	pdf.SetTextColor(255, 255, 255)
	pdf.SetXY(0, 1)
	pdf.SetFont("Helvetica", "B", 16)
	pdf.CellFormat(210, 8, "TEST - NOT A VALID TICKET", "", 2, "C", false, 0, "")
	pdf.SetFont("go", "", 8)
	pdf.CellFormat(210, 6, TestNotice(l), "", 2, "C", false, 0, "")
	pdf.SetTextColor(0, 0, 0)
	pdf.SetXY(20, 22)
}

func joinNonEmpty(parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += ", "
		}
		out += p
	}
	return out
}
