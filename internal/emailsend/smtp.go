package emailsend

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"sync"
	"time"
)

// SMTPConfig is where and how the SMTP adapter sends.
type SMTPConfig struct {
	Addr     string // host:port
	From     string // the service's sending address
	TLS      string // "" (plain; STARTTLS when the server offers it), "starttls" (required) or "tls" (implicit, e.g. port 465)
	Username string // with Password: AUTH PLAIN (only over TLS or to localhost)
	Password string
	Timeout  time.Duration // per message; 0 = 30s
}

// SMTP sends through an SMTP server: the local stack's inbox, or any relay.
// It keeps one session open between messages (RSET, then the next one), since
// a new session costs the server's greeting (MailDev looks up the client's
// name first: about 100 ms here); sends through one SMTP take turns on it.
type SMTP struct {
	cfg SMTPConfig
	now func() time.Time

	mu      sync.Mutex
	conn    *smtp.Client // the open session, nil when none
	netConn net.Conn     // its connection, for deadlines
}

// NewSMTP returns the SMTP adapter.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("mail: SMTP address %q: %v", cfg.Addr, err)
	}
	if _, err := mail.ParseAddress(cfg.From); err != nil {
		return nil, fmt.Errorf("mail: sending address %q: %v", cfg.From, err)
	}
	switch cfg.TLS {
	case "", "starttls", "tls":
	default:
		return nil, fmt.Errorf("mail: SMTP TLS mode %q: want starttls, tls or empty", cfg.TLS)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	return &SMTP{cfg: cfg, now: time.Now}, nil
}

// Send delivers m and returns its Message-ID. A permanent (5xx) refusal of
// the sender, the recipient or the data is ErrRejected.
func (s *SMTP) Send(ctx context.Context, m Message) (string, error) {
	raw, err := Encode(m, Envelope{From: s.cfg.From, Date: s.now()})
	if err != nil {
		return "", err
	}
	to, _ := mail.ParseAddress(m.To) // Encode parsed it
	from, _ := mail.ParseAddress(s.cfg.From)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.session(ctx)
	if err != nil {
		return "", err
	}
	if err := s.transact(c, from.Address, to.Address, raw.Bytes); err != nil {
		// A refused recipient leaves the session usable; anything else may not.
		if !errors.Is(err, ErrRejected) || c.Reset() != nil {
			s.drop()
		}
		return "", err
	}
	return raw.MessageID, nil
}

// session returns the open session after a successful RSET, or a new one.
func (s *SMTP) session(ctx context.Context) (*smtp.Client, error) {
	if s.conn != nil {
		s.deadline(ctx)
		if err := s.conn.Reset(); err == nil {
			return s.conn, nil
		}
		s.drop()
	}
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	s.conn = c
	return c, nil
}

// deadline bounds the open session's next exchange by ctx.
func (s *SMTP) deadline(ctx context.Context) {
	if dl, ok := ctx.Deadline(); ok && s.netConn != nil {
		_ = s.netConn.SetDeadline(dl)
	}
}

func (s *SMTP) drop() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	s.conn, s.netConn = nil, nil
}

// Close ends the open session, if any.
func (s *SMTP) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Quit()
	s.drop()
	return err
}

// dial connects, greets and secures the session as configured.
func (s *SMTP) dial(ctx context.Context) (*smtp.Client, error) {
	host, _, _ := net.SplitHostPort(s.cfg.Addr)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("mail: SMTP connect: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	tlsCfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if s.cfg.TLS == "tls" {
		conn = tls.Client(conn, tlsCfg)
	}
	s.netConn = conn
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("mail: SMTP greeting: %w", err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok && s.cfg.TLS != "tls" {
		if err := c.StartTLS(tlsCfg); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("mail: SMTP STARTTLS: %w", err)
		}
	} else if s.cfg.TLS == "starttls" {
		_ = c.Close()
		return nil, errors.New("mail: the SMTP server does not offer STARTTLS, which TLS=starttls requires")
	}
	if s.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, host)); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("mail: SMTP AUTH: %w", err)
		}
	}
	return c, nil
}

func (s *SMTP) transact(c *smtp.Client, from, to string, data []byte) error {
	if err := c.Mail(from); err != nil {
		return smtpErr("MAIL FROM", err)
	}
	if err := c.Rcpt(to); err != nil {
		return smtpErr("RCPT TO", err)
	}
	w, err := c.Data()
	if err != nil {
		return smtpErr("DATA", err)
	}
	if _, err := w.Write(data); err != nil {
		return smtpErr("DATA", err)
	}
	if err := w.Close(); err != nil {
		return smtpErr("DATA", err)
	}
	return nil
}

// smtpErr marks permanent (5xx) replies as ErrRejected.
func smtpErr(step string, err error) error {
	var te *textproto.Error
	if errors.As(err, &te) && te.Code >= 500 && te.Code < 600 {
		return fmt.Errorf("%w: SMTP %s: %d %s", ErrRejected, step, te.Code, te.Msg)
	}
	return fmt.Errorf("mail: SMTP %s: %w", step, err)
}
