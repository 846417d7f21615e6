package emailtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"tix/internal/emailrender"
	"tix/internal/emailsend"
)

// Harness is one adapter under the contract: the sender, the sending address
// it was given, and a way to read back the raw message delivered to an address.
type Harness struct {
	Sender emailsend.Sender
	From   string
	Read   func(ctx context.Context, to string) ([]byte, error)
	// Refuse makes the provider refuse address for good (nil: the provider
	// has no per-address refusal to arrange).
	Refuse func(address string)
}

// NewAddress is a recipient no other case uses.
func NewAddress(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b) + "@buyer.example"
}

// SampleTickets is a paid order's email with seated and general admission
// tickets, Cyrillic text and HTML that must be escaped.
func SampleTickets(to, lang string) emailrender.TicketsEmail {
	return emailrender.TicketsEmail{
		To: to,
		Organizer: emailrender.Organizer{Name: "Клуб «Север»", ReplyTo: "hello@sever.example",
			Support: "help@sever.example", LogoURL: "https://sever.example/logo.png", Language: lang},
		Event: emailrender.Event{Title: "Ночь <джаза> & блюза", Venue: "Большой зал", City: "Москва",
			Start: time.Date(2026, 12, 25, 16, 0, 0, 0, time.UTC), TimeZone: "Europe/Moscow"},
		OrderID: "ord_contract",
		Total:   emailrender.Money{Minor: 300000, Currency: "RUB"},
		Tickets: []emailrender.TicketInfo{
			{Number: "TIX-AAA111", QR: `{"v":1,"order_id":"ord_contract","ticket_number":"TIX-AAA111"}`,
				Seat: &emailrender.Seat{Label: "A-1", Zone: "Партер", Row: "1", Number: 1}},
			{Number: "TIX-BBB222", QR: `{"v":1,"order_id":"ord_contract","ticket_number":"TIX-BBB222"}`},
		},
	}
}

// Run is the contract every Sender adapter passes: what it sends arrives
// whole (recipient, sender, subject, both parts, one inline QR per ticket
// that decodes to its payload, the PDF with a page per ticket), an address
// that cannot be one is ErrRejected, and so is one the provider refuses.
func Run(t *testing.T, h Harness) {
	ctx := context.Background()
	t.Run("DeliversTheTicketsWhole", func(t *testing.T) {
		e := SampleTickets(NewAddress("buyer"), "ru")
		m, err := emailrender.RenderTickets(e)
		if err != nil {
			t.Fatal(err)
		}
		id, err := h.Sender.Send(ctx, m)
		if err != nil || id == "" {
			t.Fatalf("send: id %q, %v", id, err)
		}
		raw, err := h.Read(ctx, e.To)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		CheckTickets(t, e, p)
		if p.From != h.From || p.Header.Get("Reply-To") != "<hello@sever.example>" {
			t.Errorf("from %q reply-to %q", p.From, p.Header.Get("Reply-To"))
		}
	})
	t.Run("AnInvalidAddressIsRejected", func(t *testing.T) {
		m, err := emailrender.RenderTickets(SampleTickets("not an address", "en"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Sender.Send(ctx, m); !errors.Is(err, emailsend.ErrRejected) {
			t.Errorf("send to an invalid address: %v, want ErrRejected", err)
		}
	})
	if h.Refuse != nil {
		t.Run("ARefusedAddressIsRejected", func(t *testing.T) {
			to := NewAddress("suppressed")
			h.Refuse(to)
			m, err := emailrender.RenderRefund(emailrender.RefundEmail{To: to, Organizer: SampleTickets(to, "en").Organizer,
				Event: SampleTickets(to, "en").Event, OrderID: "ord_r", Amount: emailrender.Money{Minor: 100, Currency: "RUB"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Sender.Send(ctx, m); !errors.Is(err, emailsend.ErrRejected) {
				t.Errorf("send to a refused address: %v, want ErrRejected", err)
			}
		})
	}
}

// CheckTickets checks a delivered tickets email against what was rendered.
func CheckTickets(t *testing.T, e emailrender.TicketsEmail, p *Parsed) {
	t.Helper()
	if p.To != e.To || !strings.Contains(p.Subject, e.Event.Title) || p.FromName != e.Organizer.Name {
		t.Errorf("to %q subject %q from name %q", p.To, p.Subject, p.FromName)
	}
	for _, tk := range e.Tickets {
		if !strings.Contains(p.Text, tk.Number) || !strings.Contains(p.HTML, tk.Number) {
			t.Errorf("ticket %s missing from a part", tk.Number)
		}
	}
	if !strings.Contains(p.HTML, "Ночь &lt;джаза&gt; &amp; блюза") {
		t.Errorf("HTML does not show the escaped title:\n%s", p.HTML)
	}
	if len(p.Inline) != len(e.Tickets) {
		t.Fatalf("%d inline images for %d tickets", len(p.Inline), len(e.Tickets))
	}
	for i, img := range p.Inline {
		got, err := DecodeQR(img.Data)
		if err != nil || got != e.Tickets[i].QR {
			t.Errorf("inline %d decodes to %q (%v), want %q", i, got, err, e.Tickets[i].QR)
		}
		if !strings.Contains(p.HTML, `src="cid:`+img.ContentID+`"`) {
			t.Errorf("inline %d (cid %s) is not shown by the HTML", i, img.ContentID)
		}
	}
	if len(p.Attachments) != 1 || p.Attachments[0].ContentType != "application/pdf" {
		t.Fatalf("%d attachments, want the tickets PDF", len(p.Attachments))
	}
	if n, err := PDFPages(p.Attachments[0].Data); err != nil || n != len(e.Tickets) {
		t.Errorf("PDF: %d pages (%v), want %d", n, err, len(e.Tickets))
	}
}
