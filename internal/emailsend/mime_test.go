package emailsend_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"tix/internal/emailsend"
	"tix/internal/emailsend/emailtest"
)

func encode(t *testing.T, m emailsend.Message) (*emailtest.Parsed, []byte) {
	t.Helper()
	raw, err := emailsend.Encode(m, emailsend.Envelope{From: serviceFrom, Date: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := emailtest.Parse(raw.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return p, raw.Bytes
}

// TestEncode_HeadersCannotBeInjected: a line break in a subject or name
// stays inside its header; an added header must be X- and one line.
func TestEncode_HeadersCannotBeInjected(t *testing.T) {
	m := emailsend.Message{To: "a@buyer.example", FromName: "Evil\r\nBcc: victim@x.example", Subject: "Hi\r\nBcc: victim@x.example", Text: "t", HTML: "h"}
	p, raw := encode(t, m)
	if p.Header.Get("Bcc") != "" || strings.Contains(string(raw), "\r\nBcc:") {
		t.Errorf("a Bcc header got in:\n%s", raw[:400])
	}
	if !strings.HasPrefix(p.Subject, "Hi") {
		t.Errorf("subject %q", p.Subject)
	}
	for _, h := range []map[string]string{{"Bcc": "v@x.example"}, {"X-Tix-Order": "o\r\nBcc: v@x.example"}} {
		m.Headers = h
		if _, err := emailsend.Encode(m, emailsend.Envelope{From: serviceFrom, Date: time.Now()}); err == nil {
			t.Errorf("headers %q accepted", h)
		}
	}
}

func TestEncode_LongAndNonASCIIHeadersRoundTrip(t *testing.T) {
	subject := strings.Repeat("Билеты на концерт ", 8) + strings.Repeat("and a long ASCII tail ", 5)
	name := "Организатор «Очень длинное название» & Co"
	p, raw := encode(t, emailsend.Message{To: "a@buyer.example", FromName: name, Subject: subject, Text: "t", HTML: "h"})
	if p.Subject != subject || p.FromName != name {
		t.Errorf("subject %q\nname %q", p.Subject, p.FromName)
	}
	for _, line := range strings.Split(string(raw), "\r\n") {
		if len(line) > 78 {
			t.Errorf("line of %d characters: %q", len(line), line)
		}
	}
	if p.Header.Get("Date") != "Mon, 23 Nov 2026 10:00:00 +0000" {
		t.Errorf("date %q", p.Header.Get("Date"))
	}
}

func TestEncode_BadAddresses(t *testing.T) {
	m := emailsend.Message{To: "a@buyer.example", Subject: "s", Text: "t", HTML: "h"}
	if _, err := emailsend.Encode(m, emailsend.Envelope{From: "nobody", Date: time.Now()}); err == nil || errors.Is(err, emailsend.ErrRejected) {
		t.Errorf("a bad sending address: %v, want a configuration error", err)
	}
	m.ReplyTo = "not an address"
	if _, err := emailsend.Encode(m, emailsend.Envelope{From: serviceFrom, Date: time.Now()}); err == nil {
		t.Error("a bad reply-to accepted")
	}
	m.ReplyTo, m.To = "", "two@x.example, three@x.example"
	if _, err := emailsend.Encode(m, emailsend.Envelope{From: serviceFrom, Date: time.Now()}); !errors.Is(err, emailsend.ErrRejected) {
		t.Errorf("two recipients: %v, want ErrRejected", err)
	}
}

// TestEncode_TextOnly: a message without images or attachments is a plain
// multipart/alternative.
func TestEncode_TextOnly(t *testing.T) {
	p, _ := encode(t, emailsend.Message{To: "a@buyer.example", Subject: "s", Text: "plain ✓\nline two", HTML: "<p>html ✓</p>"})
	if got := strings.Join(p.Structure, " "); got != "multipart/alternative text/plain text/html" {
		t.Errorf("structure %s", got)
	}
	if p.Text != "plain ✓\r\nline two" || p.HTML != "<p>html ✓</p>" {
		t.Errorf("text %q html %q", p.Text, p.HTML)
	}
}
