package emailsend_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/emailsend"
	"tix/internal/emailsend/emailtest"
	"tix/internal/testenv"
)

const serviceFrom = "tickets@tix.example"

// TestSMTP_Contract runs the contract against the real local sink: the SMTP
// adapter sends to MailDev, and the message is read back from its HTTP API.
func TestSMTP_Contract(t *testing.T) {
	s, err := emailsend.NewSMTP(emailsend.SMTPConfig{Addr: testenv.SMTPEndpoint(t), From: "Tix <" + serviceFrom + ">"})
	if err != nil {
		t.Fatal(err)
	}
	inbox := emailtest.MailDev{URL: testenv.MailDevURL(t)}
	emailtest.Run(t, emailtest.Harness{Sender: s, From: serviceFrom,
		Read: func(ctx context.Context, to string) ([]byte, error) { return inbox.Raw(ctx, to, 10*time.Second) }})
}
