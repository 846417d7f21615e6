package emailsend_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/emailsend/emailtest"
	"tix/internal/testenv"
)

// BenchmarkSMTPSend is one SMTP sender pushing rendered two-ticket emails into
// MailDev, one after another over the session the adapter keeps open (make
// bench-mail).
func BenchmarkSMTPSend(b *testing.B) {
	s, err := emailsend.NewSMTP(emailsend.SMTPConfig{Addr: testenv.SMTPEndpoint(b), From: serviceFrom})
	if err != nil {
		b.Fatal(err)
	}
	m, err := emailrender.RenderTickets(emailtest.SampleTickets(emailtest.NewAddress("bench"), "ru"))
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := emailsend.Encode(m, emailsend.Envelope{From: serviceFrom, Date: time.Now()})
	b.SetBytes(int64(len(raw.Bytes)))
	start := time.Now()
	for b.Loop() {
		if _, err := s.Send(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}
