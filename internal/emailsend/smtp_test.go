package emailsend_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/emailsend/emailtest"
)

// fakeSMTP is a small SMTP server: RCPT TO answers rcpt, DATA is accepted
// (and the session then closed when hangUp is set); it counts sessions.
type fakeSMTP struct {
	rcpt     string
	hangUp   bool
	sessions atomic.Int32
	messages atomic.Int32
}

func (f *fakeSMTP) start(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.sessions.Add(1)
			go f.serve(c)
		}
	}()
	return ln.Addr().String()
}

func (f *fakeSMTP) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(s string) { _, _ = c.Write([]byte(s + "\r\n")) }
	say("220 fake.example ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		switch strings.ToUpper(strings.Fields(line + " x")[0]) {
		case "EHLO", "HELO":
			say("250 fake.example")
		case "RCPT":
			say(f.rcpt)
		case "DATA":
			say("354 go ahead")
			for line != ".\r\n" {
				if line, err = r.ReadString('\n'); err != nil {
					return
				}
			}
			f.messages.Add(1)
			say("250 queued")
			if f.hangUp {
				return
			}
		case "QUIT":
			say("221 bye")
			return
		default: // MAIL, RSET, NOOP
			say("250 OK")
		}
	}
}

func refusingSMTP(t *testing.T, reply string) string {
	return (&fakeSMTP{rcpt: reply}).start(t)
}

// TestSMTP_ReusesTheSessionAndRedials: messages share one session; when the
// server has closed it, the next message opens a new one and goes through.
func TestSMTP_ReusesTheSessionAndRedials(t *testing.T) {
	for _, hangUp := range []bool{false, true} {
		f := &fakeSMTP{rcpt: "250 OK", hangUp: hangUp}
		s, err := emailsend.NewSMTP(emailsend.SMTPConfig{Addr: f.start(t), From: serviceFrom})
		if err != nil {
			t.Fatal(err)
		}
		m := emailsend.Message{To: "a@buyer.example", Subject: "s", Text: "t", HTML: "<p>t</p>"}
		for i := 0; i < 3; i++ {
			if _, err := s.Send(context.Background(), m); err != nil {
				t.Fatalf("hang up %v, message %d: %v", hangUp, i, err)
			}
		}
		want := int32(1)
		if hangUp {
			want = 3
		}
		if f.messages.Load() != 3 || f.sessions.Load() != want {
			t.Errorf("hang up %v: %d messages in %d sessions, want 3 in %d", hangUp, f.messages.Load(), f.sessions.Load(), want)
		}
		if err := s.Close(); err != nil && !hangUp {
			t.Errorf("close: %v", err)
		}
	}
}

func TestSMTP_RefusalsMapToErrRejectedOnlyWhenPermanent(t *testing.T) {
	for reply, rejected := range map[string]bool{
		"550 5.1.1 no such mailbox":               true,
		"451 4.2.2 mailbox full, try again later": false,
	} {
		s, err := emailsend.NewSMTP(emailsend.SMTPConfig{Addr: refusingSMTP(t, reply), From: serviceFrom})
		if err != nil {
			t.Fatal(err)
		}
		m, err := emailrender.RenderTickets(emailtest.SampleTickets(emailtest.NewAddress("x"), "en"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Send(context.Background(), m)
		if err == nil || errors.Is(err, emailsend.ErrRejected) != rejected {
			t.Errorf("RCPT answered %q: %v, want rejected=%v", reply, err, rejected)
		}
	}
}

func TestNewSMTP_BadConfig(t *testing.T) {
	for _, c := range []emailsend.SMTPConfig{
		{Addr: "no-port", From: serviceFrom},
		{Addr: "127.0.0.1:25", From: "not an address"},
		{Addr: "127.0.0.1:25", From: serviceFrom, TLS: "maybe"},
	} {
		if _, err := emailsend.NewSMTP(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
