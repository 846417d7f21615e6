// Package emailsend sends one message: the Message, the Sender port, MIME
// encoding and the SMTP adapter (the local stack's inbox, or any relay). The
// Amazon SES adapter is internal/emailsend/ses; both are held to one contract
// suite (emailtest.Run). What a message says is internal/emailrender's; which
// messages are owed, internal/emailjobs'. It takes plain values: internal/app
// reads the configuration.
package emailsend

import (
	"context"
	"errors"
)

// Message is one email, ready to send: a plain-text and an HTML part, inline
// images the HTML refers to by cid:ContentID, and attachments.
type Message struct {
	FromName    string // the organizer's sender name; the address is the service's
	ReplyTo     string // the organizer's reply-to address ("" = none)
	To          string
	Subject     string
	Text        string
	HTML        string
	Inline      []Part // images the HTML shows (cid:ContentID)
	Attachments []Part // e.g. the tickets' PDF
	// Headers are extra headers (e.g. X-Tix-Order, X-Tix-Kind), never PII.
	Headers map[string]string
}

// Part is an inline image or an attachment.
type Part struct {
	ContentID   string // inline parts only
	Filename    string
	ContentType string
	Data        []byte
}

// Sender sends a message and returns the provider's message id.
type Sender interface {
	Send(ctx context.Context, m Message) (string, error)
}

// ErrRejected marks a message the provider refused for good (an invalid or
// suppressed address): retrying cannot help. Any other error may be retried.
var ErrRejected = errors.New("message rejected")
