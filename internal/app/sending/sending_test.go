package sending_test

import (
	"context"
	"testing"

	"tix/internal/app/sending"
	"tix/internal/config"
	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/emailsend/emailtest"
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
