// Package ses is the Amazon SES v2 adapter of emailsend.Sender: only the
// deliver function links it (internal/app/sending).
package ses

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	"tix/internal/awscfg"
	"tix/internal/emailsend"
)

// SESAPI is the part of the SES v2 client the adapter uses.
type SESAPI interface {
	SendEmail(ctx context.Context, in *sesv2.SendEmailInput, opts ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error)
}

// SES sends through Amazon SES v2 (SendEmail with the raw MIME message, so
// the bytes are the same as the SMTP adapter's).
type SES struct {
	api       SESAPI
	from      string
	configSet string // "" = none
	now       func() time.Time
}

// NewSES returns the SES adapter over api, sending as from, tagging each
// message with the configuration set (its bounce and complaint events).
func NewSES(api SESAPI, from, configSet string) (*SES, error) {
	if _, err := mail.ParseAddress(from); err != nil {
		return nil, fmt.Errorf("mail: sending address %q: %v", from, err)
	}
	return &SES{api: api, from: from, configSet: configSet, now: time.Now}, nil
}

// OpenSES builds the SES v2 client for region; endpoint non-empty points it
// at another server (a test's fake); opts adjust the client (e.g. retries).
func OpenSES(ctx context.Context, region, endpoint string, opts ...func(*sesv2.Options)) (*sesv2.Client, error) {
	cfg, err := awscfg.Load(ctx, region, endpoint)
	if err != nil {
		return nil, err
	}
	return sesv2.NewFromConfig(cfg, append([]func(*sesv2.Options){func(o *sesv2.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}}, opts...)...), nil
}

// Send delivers m and returns SES's message id.
func (s *SES) Send(ctx context.Context, m emailsend.Message) (string, error) {
	raw, err := emailsend.Encode(m, emailsend.Envelope{From: s.from, Date: s.now()})
	if err != nil {
		return "", err
	}
	to, _ := mail.ParseAddress(m.To) // emailsend.Encode parsed it
	from, _ := mail.ParseAddress(s.from)
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(from.Address),
		Destination:      &types.Destination{ToAddresses: []string{to.Address}},
		Content:          &types.EmailContent{Raw: &types.RawMessage{Data: raw.Bytes}},
	}
	if s.configSet != "" {
		in.ConfigurationSetName = aws.String(s.configSet)
	}
	out, err := s.api.SendEmail(ctx, in)
	if err != nil {
		return "", sesErr(err)
	}
	return aws.ToString(out.MessageId), nil
}

// sesRejections are the SES errors about the message itself: its address is
// refused or unverified (in the sandbox, the recipient too), or the request
// is malformed. Account-wide stops (AccountSuspended, SendingPaused) and
// throttling stay retryable: an operator's fix lets the retries through.
var sesRejections = map[string]bool{
	"MessageRejected":                    true,
	"MailFromDomainNotVerifiedException": true,
	"BadRequestException":                true,
}

func sesErr(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) && sesRejections[ae.ErrorCode()] {
		return fmt.Errorf("%w: SES %s: %s", emailsend.ErrRejected, ae.ErrorCode(), ae.ErrorMessage())
	}
	return fmt.Errorf("mail: SES SendEmail: %w", err)
}
