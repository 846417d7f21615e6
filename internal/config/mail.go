package config

import (
	"fmt"
	"net"
	"net/mail"
)

// Mail is how tix sends email (TIX_MAIL_*, TIX_SMTP_*, TIX_SES_*).
type Mail struct {
	Sender              string // TIX_MAIL_SENDER: smtp | ses | none
	From                string // TIX_MAIL_FROM
	SMTPAddr            string // TIX_SMTP_ADDR
	SMTPTLS             string // TIX_SMTP_TLS: "" | starttls | tls
	SMTPUsername        string // TIX_SMTP_USERNAME
	SMTPPassword        string // TIX_SMTP_PASSWORD
	SESConfigurationSet string // TIX_SES_CONFIGURATION_SET
	// RecipientDailyCap is TIX_MAIL_RECIPIENT_DAILY_CAP: emails of orders one
	// address gets from one organizer in a UTC day (emailjobs.Settings).
	RecipientDailyCap int
}

// maxRecipientDailyCap bounds TIX_MAIL_RECIPIENT_DAILY_CAP: the day's job
// ids are kept in one item (about 100 bytes each).
const maxRecipientDailyCap = 1000

// mail reads the email settings: the sender kind, its address and, for
// smtp, a host:port and a TLS mode that can work.
func (r *reader) mail() Mail {
	m := Mail{
		Sender: r.get("TIX_MAIL_SENDER"), From: r.get("TIX_MAIL_FROM"),
		SMTPAddr: r.get("TIX_SMTP_ADDR"), SMTPTLS: r.get("TIX_SMTP_TLS"),
		SMTPUsername: r.get("TIX_SMTP_USERNAME"), SMTPPassword: r.getenv("TIX_SMTP_PASSWORD"),
		SESConfigurationSet: r.get("TIX_SES_CONFIGURATION_SET"),
		RecipientDailyCap:   r.posInt("TIX_MAIL_RECIPIENT_DAILY_CAP"),
	}
	if m.RecipientDailyCap > maxRecipientDailyCap {
		r.errs = append(r.errs, fmt.Errorf("TIX_MAIL_RECIPIENT_DAILY_CAP=%d: at most %d", m.RecipientDailyCap, maxRecipientDailyCap))
	}
	switch m.Sender {
	case "none":
		return m
	case "smtp", "ses":
	default:
		r.errs = append(r.errs, fmt.Errorf("TIX_MAIL_SENDER=%q: must be smtp, ses or none", m.Sender))
		return m
	}
	if a, err := mail.ParseAddress(m.From); err != nil || m.From == "" {
		r.errs = append(r.errs, fmt.Errorf("TIX_MAIL_FROM=%q: must be the sending address (tickets@example.com) when TIX_MAIL_SENDER=%s", m.From, m.Sender))
	} else {
		m.From = a.Address
	}
	if m.Sender != "smtp" {
		return m
	}
	if _, _, err := net.SplitHostPort(m.SMTPAddr); err != nil {
		r.errs = append(r.errs, fmt.Errorf("TIX_SMTP_ADDR=%q: must be host:port", m.SMTPAddr))
	}
	switch m.SMTPTLS {
	case "", "starttls", "tls":
	default:
		r.errs = append(r.errs, fmt.Errorf("TIX_SMTP_TLS=%q: must be empty, starttls or tls", m.SMTPTLS))
	}
	return m
}
