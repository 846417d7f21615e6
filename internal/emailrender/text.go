package emailrender

import (
	"fmt"
	"strings"
	"time"

	"tix/internal/emailjobs"
	"tix/internal/emailsend"
)

// TextRenderer is a plain-text emailjobs.Renderer: every fact, no images or PDF.
type TextRenderer struct{}

func money(v int64, cur string) string { return fmt.Sprintf("%d.%02d %s", v/100, v%100, cur) }

func (TextRenderer) Tickets(d emailjobs.TicketsData) (emailsend.Message, error) {
	var b strings.Builder
	ru := d.Lang == "ru"
	subject := "Your tickets: " + d.Event.Title
	if ru {
		subject = "Ваши билеты: " + d.Event.Title
	}
	if d.Test {
		subject = TestSubject(subject)
		b.WriteString(TestNotice(d.Lang) + "\n")
	}
	fmt.Fprintf(&b, "%s\n%s, %s\n%s\n", d.Event.Title, d.Event.Venue, d.Event.City, d.Event.Local().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Order %s, total %s\n", d.OrderID, money(d.Total, d.Currency))
	for _, t := range d.Tickets {
		fmt.Fprintf(&b, "Ticket %s %s (code %s)\n", t.Number, t.Seat, t.QRPayload)
	}
	fmt.Fprintf(&b, "Sold by %s. Help: %s\n", d.Organizer.Name, d.Organizer.Support)
	return emailsend.Message{Subject: subject, Text: b.String()}, nil
}

func (TextRenderer) Refund(d emailjobs.RefundData) (emailsend.Message, error) {
	subject := "Refund: " + d.Event.Title
	if d.Lang == "ru" {
		subject = "Возврат: " + d.Event.Title
	}
	text := fmt.Sprintf("Order %s: %s refunded.\nSold by %s. Help: %s\n", d.OrderID, money(d.Amount, d.Currency), d.Organizer.Name, d.Organizer.Support)
	if d.Test {
		subject, text = TestSubject(subject), TestNotice(d.Lang)+"\n"+text
	}
	return emailsend.Message{Subject: subject, Text: text}, nil
}

func (TextRenderer) Alert(d emailjobs.AlertData) (emailsend.Message, error) {
	a := d.Alert
	text := fmt.Sprintf("%s at %s\n", a.Cause, a.At.UTC().Format(time.RFC3339))
	switch a.Cause {
	case emailjobs.CauseEndpointDisabled:
		text += fmt.Sprintf("Endpoint %s (%s) was disabled: %s after %d failures.\nLast failures:\n  %s\n",
			a.EndpointID, a.URL, a.Reason, a.Failures, strings.Join(a.LastErrors, "\n  "))
	case emailjobs.CauseLiveKeyRevoked:
		text += fmt.Sprintf("Live key %s was revoked.\n", a.KeyID)
	case emailjobs.CausePartlyRefundedOutside:
		text += fmt.Sprintf("Order %s (payment %s) was partly refunded at the bank, outside tix; it stays paid.\n", a.OrderID, a.PaymentID)
	case emailjobs.CauseKeyManyIPs:
		text += fmt.Sprintf("Key %s was used from %d distinct IPs today.\n", a.KeyID, a.DistinctIPs)
	case emailjobs.CauseKeyLeaked:
		text += fmt.Sprintf("Secret key %s (%s) was found in a public source (%s) and revoked.\n", a.KeyID, a.Key, a.URL)
	case emailjobs.CauseKeyCeiling:
		text += fmt.Sprintf("Publishable key %s reached its ceiling of %d %s requests per window.\n", a.KeyID, a.Limit, a.Bucket)
	case emailjobs.CauseAccountVerify, emailjobs.CauseAccountReset, emailjobs.CauseAccountExists, emailjobs.CauseMemberInvite:
		text += fmt.Sprintf("For %s: %s\n", d.To, a.URL)
	}
	return emailsend.Message{Subject: "tix alert: " + a.Cause, Text: text}, nil
}
