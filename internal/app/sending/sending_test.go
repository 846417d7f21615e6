package sending_test

import (
	"context"
	"errors"
	"testing"

	"tix/internal/app"
	"tix/internal/app/sending"
	"tix/internal/config"
	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/emailsend/emailtest"
	"tix/internal/testenv"
)

const serviceFrom = "tickets@tix.example"

// TestSender builds each configured sender; the SES one sends through the fake.
func TestSender(t *testing.T) {
	ctx := context.Background()
	if s, err := sending.Sender(ctx, config.Mail{Sender: "none"}, "", ""); s != nil || err != nil {
		t.Errorf("none: %v, %v", s, err)
	}
	if s, err := sending.Sender(ctx, config.Mail{Sender: "smtp", From: serviceFrom, SMTPAddr: "127.0.0.1:1025"}, "", ""); err != nil {
		t.Errorf("smtp: %T, %v", s, err)
	} else if _, ok := s.(*emailsend.SMTP); !ok {
		t.Errorf("smtp: %T", s)
	}
	fake := emailtest.NewFakeSES(t)
	s, err := sending.Sender(ctx, config.Mail{Sender: "ses", From: serviceFrom, SESConfigurationSet: "cs"}, "eu-west-1", fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	to := emailtest.NewAddress("open")
	m, _ := emailrender.RenderTickets(emailtest.SampleTickets(to, "en"))
	if id, err := s.Send(ctx, m); err != nil || id == "" || len(fake.Sent(to)) != 1 || fake.Sent(to)[0].ConfigurationSet != "cs" {
		t.Errorf("ses send: %q, %v", id, err)
	}
	if _, err := sending.Sender(ctx, config.Mail{Sender: "fax"}, "", ""); err == nil {
		t.Error("unknown sender accepted")
	}
}

// TestNew_OnlyTheDeliverWiringSends: app.New (the HTTP API and timers
// functions) writes email jobs but holds no sender, and an email message
// reaching it fails (it comes back, for the deliver function); sending.New
// (deliver, the local runner) adds the sender and the templates' renderer.
func TestNew_OnlyTheDeliverWiringSends(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{
		"TIX_CURSOR_SECRET": string(testenv.CursorSecret), "TIX_TABLE": "tix-sending-wiring",
		"TIX_WEBHOOK_KEYRING": config.LocalKeyring, "TIX_DYNAMODB_ENDPOINT": "http://127.0.0.1:1", "TIX_SQS_ENDPOINT": "http://127.0.0.1:1",
		"TIX_MAIL_SENDER": "smtp", "TIX_SMTP_ADDR": "127.0.0.1:1", "TIX_MAIL_FROM": serviceFrom,
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Email == nil || a.Email.Sender != nil || a.Email.Renderer != nil {
		t.Fatalf("app.New: email %+v, want jobs written without a sender or renderer", a.Email)
	}
	if len(a.Webhooks.Subscribers) != 1 || a.Webhooks.Subscribers[0] != a.Email || a.Webhooks.Alerts != a.Email {
		t.Errorf("the email pipeline does not follow the outbox: subscribers %v, alerts %v", a.Webhooks.Subscribers, a.Webhooks.Alerts)
	}
	msg := []byte(`{"kind":"email","job_id":"ord_x/tickets","due":"2026-01-01T00:00:00Z"}`)
	if err := a.HandleDeliveryMessage(ctx, msg); !errors.Is(err, app.ErrNoSender) {
		t.Errorf("an email message without a sender: %v, want app.ErrNoSender", err)
	}
	d, err := sending.New(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Email.Sender.(*emailsend.SMTP); !ok {
		t.Errorf("sending.New: sender %T, want the SMTP adapter", d.Email.Sender)
	}
	if _, ok := d.Email.Renderer.(emailrender.Renderer); !ok {
		t.Errorf("sending.New: renderer %T, want emailrender.Renderer", d.Email.Renderer)
	}
	if len(d.Webhooks.Subscribers) != 1 || d.Webhooks.Subscribers[0] != d.Email {
		t.Errorf("sending.New: subscribers %v, want the one email pipeline", d.Webhooks.Subscribers)
	}
}
