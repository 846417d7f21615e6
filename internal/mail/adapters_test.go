package mail_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"tix/internal/config"
	"tix/internal/mail"
	"tix/internal/mail/mailtest"
	"tix/internal/testenv"
)

const serviceFrom = "tickets@tix.example"

// TestSMTP_Contract runs the contract against the real local sink: the SMTP
// adapter sends to MailDev, and the message is read back from its HTTP API.
func TestSMTP_Contract(t *testing.T) {
	s, err := mail.NewSMTP(mail.SMTPConfig{Addr: testenv.SMTPEndpoint(t), From: "Tix <" + serviceFrom + ">"})
	if err != nil {
		t.Fatal(err)
	}
	inbox := mailtest.MailDev{URL: testenv.MailDevURL(t)}
	mailtest.Run(t, mailtest.Harness{Sender: s, From: serviceFrom,
		Read: func(ctx context.Context, to string) ([]byte, error) { return inbox.Raw(ctx, to, 10*time.Second) }})
}

// TestSES_Contract runs the same contract against the SES adapter and the
// SDK's real client, talking to a fake SES on the v2 wire protocol.
func TestSES_Contract(t *testing.T) {
	fake := mailtest.NewFakeSES(t)
	client, err := mail.OpenSES(context.Background(), "eu-west-1", fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := mail.NewSES(client, serviceFrom, "tix-events")
	if err != nil {
		t.Fatal(err)
	}
	read := func(_ context.Context, to string) ([]byte, error) {
		calls := fake.Sent(to)
		if len(calls) != 1 {
			return nil, errors.New("want one SendEmail to the address")
		}
		if c := calls[0]; c.ConfigurationSet != "tix-events" || c.From != serviceFrom {
			t.Errorf("SendEmail from %q with configuration set %q", c.From, c.ConfigurationSet)
		}
		return calls[0].Raw, nil
	}
	mailtest.Run(t, mailtest.Harness{Sender: s, From: serviceFrom, Read: read, Refuse: fake.Reject})
}

// TestSES_ThrottlingIsRetryable: a throttled send is an error to retry, not
// a refusal of the address (the SDK's own retries are off to keep it short).
func TestSES_ThrottlingIsRetryable(t *testing.T) {
	fake := mailtest.NewFakeSES(t)
	client, err := mail.OpenSES(context.Background(), "eu-west-1", fake.URL, func(o *sesv2.Options) { o.RetryMaxAttempts = 1 })
	if err != nil {
		t.Fatal(err)
	}
	s, _ := mail.NewSES(client, serviceFrom, "")
	to := mailtest.NewAddress("busy")
	fake.Throttle(to)
	m, err := mail.RenderRefund(mail.RefundEmail{To: to, Organizer: mailtest.SampleTickets(to, "en").Organizer,
		Event: mailtest.SampleTickets(to, "en").Event, OrderID: "o", Amount: mail.Money{Minor: 1, Currency: "RUB"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), m)
	if err == nil || errors.Is(err, mail.ErrRejected) {
		t.Errorf("throttled send: %v, want a retryable error", err)
	}
}

// TestOpen builds each configured sender; the SES one sends through the fake.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	if s, err := mail.Open(ctx, config.Mail{Sender: "none"}, "", ""); s != nil || err != nil {
		t.Errorf("none: %v, %v", s, err)
	}
	if s, err := mail.Open(ctx, config.Mail{Sender: "smtp", From: serviceFrom, SMTPAddr: "127.0.0.1:1025"}, "", ""); err != nil {
		t.Errorf("smtp: %T, %v", s, err)
	} else if _, ok := s.(*mail.SMTP); !ok {
		t.Errorf("smtp: %T", s)
	}
	fake := mailtest.NewFakeSES(t)
	s, err := mail.Open(ctx, config.Mail{Sender: "ses", From: serviceFrom, SESConfigurationSet: "cs"}, "eu-west-1", fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	to := mailtest.NewAddress("open")
	m, _ := mail.RenderTickets(mailtest.SampleTickets(to, "en"))
	if id, err := s.Send(ctx, m); err != nil || id == "" || len(fake.Sent(to)) != 1 || fake.Sent(to)[0].ConfigurationSet != "cs" {
		t.Errorf("ses send: %q, %v", id, err)
	}
	if _, err := mail.Open(ctx, config.Mail{Sender: "fax"}, "", ""); err == nil {
		t.Error("unknown sender accepted")
	}
}
