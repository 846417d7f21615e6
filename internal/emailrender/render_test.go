package emailrender_test

import (
	"strings"
	"testing"
	"time"

	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/emailsend/emailtest"
)

func sampleTickets(lang string) emailrender.TicketsEmail {
	return emailrender.TicketsEmail{
		To: "buyer@example.com",
		Organizer: emailrender.Organizer{Name: "Клуб «Север» <b>&</b>", ReplyTo: "hello@sever.example",
			Support: "help@sever.example, +7 900 000-00-00", LogoURL: "https://sever.example/logo.png", Language: lang},
		Event: emailrender.Event{Title: "Ночь <script>alert(1)</script> джаза", Venue: "Большой зал", City: "Москва",
			Start: time.Date(2026, 12, 25, 16, 0, 0, 0, time.UTC), TimeZone: "Europe/Moscow"},
		OrderID: "ord_01JTEST",
		Total:   emailrender.Money{Minor: 150000, Currency: "RUB"},
		Tickets: []emailrender.TicketInfo{
			{Number: "TIX-AAA111", QR: `{"v":1,"order_id":"ord_01JTEST","ticket_number":"TIX-AAA111"}`,
				Seat: &emailrender.Seat{Label: "Партер 7-12", Zone: "Партер", Row: "7", Number: 12}},
			{Number: "TIX-BBB222", QR: `{"v":1,"order_id":"ord_01JTEST","ticket_number":"TIX-BBB222"}`},
			{Number: "TIX-CCC333", QR: `{"v":1,"order_id":"ord_01JTEST","ticket_number":"TIX-CCC333"}`},
		},
	}
}

// TestRenderTickets_BothLanguages renders the paid order's email in Russian
// and English, encodes it, reads it back and checks every part: the words of
// the language, money and start in the event's zone, escaping in HTML, one
// inline QR per ticket decoding to that ticket's payload, the PDF's pages.
func TestRenderTickets_BothLanguages(t *testing.T) {
	cases := map[string][]string{
		"ru": {"Ваши билеты: Ночь", "1\u00a0500,00\u00a0₽", "пт, 25 декабря 2026, 19:00 MSK", "Партер, ряд 7, место 12", "Если нужна помощь: help@sever.example"},
		"en": {"Your tickets: Ночь", "RUB\u00a01,500.00", "Fri, 25 Dec 2026, 19:00 MSK", "Партер, row 7, seat 12", "Need help? help@sever.example"},
	}
	for lang, want := range cases {
		t.Run(lang, func(t *testing.T) {
			e := sampleTickets(lang)
			m, err := emailrender.RenderTickets(e)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := emailsend.Encode(m, emailsend.Envelope{From: "tickets@tix.example", Date: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			p, err := emailtest.Parse(raw.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if p.Subject != want[0]+" <script>alert(1)</script> джаза" || p.FromName != e.Organizer.Name || p.To != e.To {
				t.Errorf("subject %q from %q to %q", p.Subject, p.FromName, p.To)
			}
			for _, w := range want[1:] {
				if !strings.Contains(p.Text, w) || !strings.Contains(p.HTML, w) {
					t.Errorf("%q missing from text or HTML:\n%s", w, p.Text)
				}
			}
			if strings.Contains(p.HTML, "<script>") || !strings.Contains(p.HTML, "&lt;script&gt;") || !strings.Contains(p.HTML, "&lt;b&gt;&amp;&lt;/b&gt;") {
				t.Errorf("HTML does not escape the event title and organizer name:\n%s", p.HTML)
			}
			if !strings.Contains(p.HTML, `src="https://sever.example/logo.png"`) {
				t.Error("logo missing")
			}
			checkQRs(t, e, p)
			checkPDF(t, p, len(e.Tickets))
		})
	}
}

func checkQRs(t *testing.T, e emailrender.TicketsEmail, p *emailtest.Parsed) {
	t.Helper()
	if len(p.Inline) != len(e.Tickets) {
		t.Fatalf("%d inline images for %d tickets", len(p.Inline), len(e.Tickets))
	}
	for i, img := range p.Inline {
		got, err := emailtest.DecodeQR(img.Data)
		if err != nil {
			t.Fatalf("inline %d: %v", i, err)
		}
		if got != e.Tickets[i].QR {
			t.Errorf("inline %d decodes to %q, want %q", i, got, e.Tickets[i].QR)
		}
		if img.ContentType != "image/png" || !strings.Contains(p.HTML, `src="cid:`+img.ContentID+`"`) {
			t.Errorf("inline %d (%s, cid %s) is not shown by the HTML", i, img.ContentType, img.ContentID)
		}
	}
}

func checkPDF(t *testing.T, p *emailtest.Parsed, tickets int) {
	t.Helper()
	if len(p.Attachments) != 1 || p.Attachments[0].ContentType != "application/pdf" {
		t.Fatalf("attachments %+v, want one PDF", len(p.Attachments))
	}
	n, err := emailtest.PDFPages(p.Attachments[0].Data)
	if err != nil || n != tickets {
		t.Errorf("PDF has %d pages (%v), want %d", n, err, tickets)
	}
}

func TestRenderTickets_Structure(t *testing.T) {
	m, err := emailrender.RenderTickets(sampleTickets("ru"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := emailsend.Encode(m, emailsend.Envelope{From: "tickets@tix.example", Date: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := emailtest.Parse(raw.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	want := "multipart/mixed multipart/related multipart/alternative text/plain text/html image/png image/png image/png application/pdf"
	if got := strings.Join(p.Structure, " "); got != want {
		t.Errorf("structure %s, want %s", got, want)
	}
	for _, h := range []string{"Message-Id", "Date", "Reply-To", "X-Tix-Order", "X-Tix-Kind"} {
		if p.Header.Get(h) == "" {
			t.Errorf("header %s missing", h)
		}
	}
	if p.Header.Get("Message-Id") != "<"+raw.MessageID+">" || !strings.HasSuffix(raw.MessageID, "@tix.example") {
		t.Errorf("Message-ID %q vs %q", p.Header.Get("Message-Id"), raw.MessageID)
	}
	for _, line := range strings.Split(string(raw.Bytes), "\r\n") {
		if len(line) > 78 {
			t.Fatalf("line longer than 78 characters: %q", line)
		}
	}
}

func TestRenderRefund(t *testing.T) {
	for lang, want := range map[string]string{"ru": "Возврат оформлен", "en": "Your refund is complete"} {
		e := sampleTickets(lang)
		m, err := emailrender.RenderRefund(emailrender.RefundEmail{To: e.To, Organizer: e.Organizer, Event: e.Event, OrderID: e.OrderID, Amount: e.Total, Tickets: e.Tickets})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(m.Subject, want) || !strings.Contains(m.Text, "TIX-CCC333") || !strings.Contains(m.HTML, "TIX-AAA111") || len(m.Inline)+len(m.Attachments) != 0 {
			t.Errorf("%s: %q\n%s", lang, m.Subject, m.Text)
		}
	}
}

func TestRender_BadInput(t *testing.T) {
	e := sampleTickets("de")
	if _, err := emailrender.RenderTickets(e); err == nil {
		t.Error("language de accepted")
	}
	e = sampleTickets("ru")
	e.Event.TimeZone = "Mars/Olympus"
	if _, err := emailrender.RenderTickets(e); err == nil {
		t.Error("unknown time zone accepted")
	}
	e = sampleTickets("ru")
	e.Organizer.Name = ""
	if _, err := emailrender.RenderTickets(e); err == nil {
		t.Error("an organizer without a name accepted")
	}
	e = sampleTickets("ru")
	e.Tickets = nil
	if _, err := emailrender.RenderTickets(e); err == nil {
		t.Error("an order without tickets accepted")
	}
	e = sampleTickets("ru")
	e.Tickets[1].QR = ""
	if _, err := emailrender.RenderTickets(e); err == nil {
		t.Error("a ticket without a QR payload accepted")
	}
	e = sampleTickets("ru")
	e.Organizer.LogoURL = "javascript:alert(1)"
	m, err := emailrender.RenderTickets(e)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.HTML, "javascript:") {
		t.Error("a javascript: logo URL reached the HTML")
	}
}

func TestFormatMoney(t *testing.T) {
	for _, c := range []struct {
		m      emailrender.Money
		ru, en string
	}{
		{emailrender.Money{Minor: 150000, Currency: "RUB"}, "1\u00a0500,00\u00a0₽", "RUB\u00a01,500.00"},
		{emailrender.Money{Minor: 5, Currency: "RUB"}, "0,05\u00a0₽", "RUB\u00a00.05"},
		{emailrender.Money{Minor: 123456789, Currency: "usd"}, "1\u00a0234\u00a0567,89\u00a0USD", "USD\u00a01,234,567.89"},
		{emailrender.Money{Minor: -9900, Currency: "RUB"}, "-99,00\u00a0₽", "-RUB\u00a099.00"},
	} {
		if got := emailrender.FormatMoney(c.m, "ru"); got != c.ru {
			t.Errorf("ru %v: %q, want %q", c.m, got, c.ru)
		}
		if got := emailrender.FormatMoney(c.m, "en"); got != c.en {
			t.Errorf("en %v: %q, want %q", c.m, got, c.en)
		}
	}
}

func TestRenderAlert(t *testing.T) {
	fields := map[string]string{"endpoint_id": "we_1", "url": "https://x.example/<hook>", "failures": "503 at 10:00\nTimeout at 10:05",
		"key_id": "key_1", "ips": "57", "limit": "20", "day": "2026-11-23", "revoked_at": "2026-11-23 10:00 UTC",
		"order_id": "ord_1", "payment_id": "7000000001", "bucket": "write", "key": "sk_live_...Ab12", "email": "owner@example.com",
		"event": "Jazz Night", "ticket": "TIX-7KQ2MX"}
	for _, lang := range []string{"ru", "en"} {
		for _, kind := range emailrender.AlertKinds() {
			m, err := emailrender.RenderAlert(kind, fields, lang)
			if err != nil {
				t.Fatalf("%s %s: %v", lang, kind, err)
			}
			if m.Subject == "" || m.Text == "" || strings.Contains(m.Text, "%!") || strings.Contains(m.HTML, "<hook>") {
				t.Errorf("%s %s: %q\n%s", lang, kind, m.Subject, m.Text)
			}
			if kind == emailrender.AlertKeyLeaked && (!strings.Contains(m.Text, "sk_live_...Ab12") || !strings.Contains(m.Text, "https://x.example/<hook>")) {
				t.Errorf("%s: the leaked key's alert does not say which key and where:\n%s", lang, m.Text)
			}
			if strings.HasPrefix(kind, "account_") || kind == emailrender.AlertMemberInvite {
				if !strings.Contains(m.Text, fields["url"]) || !strings.Contains(m.Subject, "owner@example.com") {
					t.Errorf("%s %s: the link or the address is missing: %q\n%s", lang, kind, m.Subject, m.Text)
				}
			}
			if kind == emailrender.AlertTicketTransfer && (!strings.Contains(m.Text, fields["url"]) || !strings.Contains(m.Text, "TIX-7KQ2MX") ||
				!strings.Contains(m.Subject, "Jazz Night")) {
				t.Errorf("%s: the transfer offer lacks its link, ticket or event: %q\n%s", lang, m.Subject, m.Text)
			}
			if kind == emailrender.AlertEndpointDisabled && !strings.Contains(m.Text, "- Timeout at 10:05") {
				t.Errorf("%s: last failures missing:\n%s", lang, m.Text)
			}
		}
	}
	if _, err := emailrender.RenderAlert(emailrender.AlertKeyManyIPs, map[string]string{"key_id": "k"}, "en"); err == nil {
		t.Error("missing fields accepted")
	}
}

// A test-mode email says TEST in its subject, both parts, every PDF page
// and every QR image (framed, still scannable); a live one nowhere. The
// refund confirmation of a test order is marked too.
func TestRender_TestModeIsMarkedTEST(t *testing.T) {
	for _, lang := range []string{"ru", "en"} {
		for _, test := range []bool{true, false} {
			e := sampleTickets(lang)
			e.Test = test
			m, err := emailrender.RenderTickets(e)
			if err != nil {
				t.Fatal(err)
			}
			pdfPages := strings.Count(emailtest.PDFStrings(m.Attachments[0].Data), "(TEST - NOT A VALID TICKET)")
			marked := []bool{strings.HasPrefix(m.Subject, "[TEST] "), strings.HasPrefix(m.Text, "TEST"),
				strings.Contains(m.HTML, ">TEST"), pdfPages == len(e.Tickets)}
			for i, got := range marked {
				if got != test {
					t.Errorf("%s test=%v: mark %d (subject, text, html, pdf) is %v", lang, test, i, got)
				}
			}
			if !test && pdfPages != 0 {
				t.Errorf("%s live: %d PDF pages say TEST", lang, pdfPages)
			}
			for i, img := range m.Inline {
				if got, err := emailtest.DecodeQR(img.Data); err != nil || got != e.Tickets[i].QR {
					t.Errorf("%s test=%v: QR %d reads %q (%v)", lang, test, i, got, err)
				}
			}
			r, err := emailrender.RenderRefund(emailrender.RefundEmail{To: e.To, Organizer: e.Organizer, Event: e.Event, OrderID: e.OrderID,
				Amount: e.Total, Tickets: e.Tickets, Test: test})
			if err != nil || strings.HasPrefix(r.Subject, "[TEST] ") != test || strings.HasPrefix(r.Text, "TEST") != test {
				t.Errorf("%s test=%v: refund subject %q, text %.40q (%v)", lang, test, r.Subject, r.Text, err)
			}
		}
	}
}
