package mail_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/mail"
	"tix/internal/mail/mailtest"
	"tix/internal/testenv"
)

// BenchmarkRenderTickets renders a two-ticket order's email (QR PNGs, the PDF).
func BenchmarkRenderTickets(b *testing.B) {
	e := mailtest.SampleTickets("buyer@example.com", "ru")
	for b.Loop() {
		if _, err := mail.RenderTickets(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSMTPSend is one SMTP sender pushing rendered two-ticket emails into
// MailDev, one after another over the session the adapter keeps open (make
// bench-mail).
func BenchmarkSMTPSend(b *testing.B) {
	s, err := mail.NewSMTP(mail.SMTPConfig{Addr: testenv.SMTPEndpoint(b), From: serviceFrom})
	if err != nil {
		b.Fatal(err)
	}
	m, err := mail.RenderTickets(mailtest.SampleTickets(mailtest.NewAddress("bench"), "ru"))
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := mail.Encode(m, mail.Envelope{From: serviceFrom, Date: time.Now()})
	b.SetBytes(int64(len(raw.Bytes)))
	start := time.Now()
	for b.Loop() {
		if _, err := s.Send(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}
