// Package sending wires what only the deliver function (and the local runner,
// which serves everything) carries: the email sender, built from the
// configuration's plain values (SMTP or Amazon SES), and the renderer (the
// templates, QR codes and the tickets' PDF). The HTTP API and timers
// functions wire internal/app alone: they write email jobs and link none of
// this.
package sending

import (
	"context"
	"fmt"

	"tix/internal/app"
	"tix/internal/clock"
	"tix/internal/config"
	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/emailsend/ses"
)

// FromEnv is what the deliver function does first: app.Start(New).
func FromEnv() *app.App { return app.Start(New) }

// New is app.New with email sending on when the configuration names a sender.
func New(ctx context.Context, cfg config.Config, c clock.Clock) (*app.App, error) {
	a, err := app.New(ctx, cfg, c)
	if err != nil {
		return nil, err
	}
	if err := Enable(ctx, a); err != nil {
		return nil, err
	}
	app.EnableDoor(a) // the ticket emails show signed codes
	return a, nil
}

// Enable gives a's email pipeline the configured sender and the templates'
// renderer; with TIX_MAIL_SENDER=none it does nothing.
func Enable(ctx context.Context, a *app.App) error {
	sender, err := Sender(ctx, a.Config.Mail, a.Config.Region, "")
	if err != nil {
		return fmt.Errorf("mail sender: %w", err)
	}
	if sender != nil {
		app.EnableEmail(a, sender, emailrender.Renderer{})
	}
	return nil
}

// Sender builds the sender m names: SMTP, SES in region, or nil for
// TIX_MAIL_SENDER=none (email is off; callers send nothing). sesEndpoint
// points the SES client elsewhere (a test's fake); "" is AWS.
func Sender(ctx context.Context, m config.Mail, region, sesEndpoint string) (emailsend.Sender, error) {
	switch m.Sender {
	case "none":
		return nil, nil
	case "smtp":
		return emailsend.NewSMTP(emailsend.SMTPConfig{Addr: m.SMTPAddr, From: m.From, TLS: m.SMTPTLS, Username: m.SMTPUsername, Password: m.SMTPPassword})
	case "ses":
		client, err := ses.OpenSES(ctx, region, sesEndpoint)
		if err != nil {
			return nil, err
		}
		return ses.NewSES(client, m.From, m.SESConfigurationSet)
	}
	return nil, fmt.Errorf("mail: unknown sender %q (smtp, ses or none)", m.Sender)
}
