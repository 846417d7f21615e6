package ses_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/emailsend/emailtest"
	"tix/internal/emailsend/ses"
)

const serviceFrom = "tickets@tix.example"

// TestSES_Contract runs the same contract against the SES adapter and the
// SDK's real client, talking to a fake SES on the v2 wire protocol.
func TestSES_Contract(t *testing.T) {
	fake := emailtest.NewFakeSES(t)
	client, err := ses.OpenSES(context.Background(), "eu-west-1", fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ses.NewSES(client, serviceFrom, "tix-events")
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
	emailtest.Run(t, emailtest.Harness{Sender: s, From: serviceFrom, Read: read, Refuse: fake.Reject})
}

// TestSES_ThrottlingIsRetryable: a throttled send is an error to retry, not
// a refusal of the address (the SDK's own retries are off to keep it short).
func TestSES_ThrottlingIsRetryable(t *testing.T) {
	fake := emailtest.NewFakeSES(t)
	client, err := ses.OpenSES(context.Background(), "eu-west-1", fake.URL, func(o *sesv2.Options) { o.RetryMaxAttempts = 1 })
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ses.NewSES(client, serviceFrom, "")
	to := emailtest.NewAddress("busy")
	fake.Throttle(to)
	m, err := emailrender.RenderRefund(emailrender.RefundEmail{To: to, Organizer: emailtest.SampleTickets(to, "en").Organizer,
		Event: emailtest.SampleTickets(to, "en").Event, OrderID: "o", Amount: emailrender.Money{Minor: 1, Currency: "RUB"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), m)
	if err == nil || errors.Is(err, emailsend.ErrRejected) {
		t.Errorf("throttled send: %v, want a retryable error", err)
	}
}
