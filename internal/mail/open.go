package mail

import (
	"context"
	"fmt"

	"tix/internal/config"
)

// Open builds the configured sender: SMTP, SES in region, or nil for
// TIX_MAIL_SENDER=none (email is off; callers send nothing). sesEndpoint
// points the SES client elsewhere (a test's fake); "" is AWS.
func Open(ctx context.Context, c config.Mail, region, sesEndpoint string) (Sender, error) {
	switch c.Sender {
	case "none":
		return nil, nil
	case "smtp":
		return NewSMTP(SMTPConfig{Addr: c.SMTPAddr, From: c.From, TLS: c.SMTPTLS, Username: c.SMTPUsername, Password: c.SMTPPassword})
	case "ses":
		client, err := OpenSES(ctx, region, sesEndpoint)
		if err != nil {
			return nil, err
		}
		return NewSES(client, c.From, c.SESConfigurationSet)
	}
	return nil, fmt.Errorf("mail: unknown sender %q (smtp, ses or none)", c.Sender)
}
