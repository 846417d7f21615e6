// Package emailjobs is tix's email pipeline, what is owed to whom and when:
// the jobs an order's payment or refund owes its buyer (it follows the order
// outbox as a webhook.Subscriber), the organizer's alerts, the consumer that claims,
// renders and sends a job exactly once (at most one duplicate after a crash
// between sending and recording), the sweep that finds jobs whose queue
// message was lost, organizer identity and the suppression list.
//
// It declares its ports (Store, Queue, Renderer) and sends through the
// emailsend.Sender port; it imports neither AWS nor the HTTP API, nor the
// renderer (internal/emailrender) or the SES adapter: the HTTP API and timers
// functions write jobs with it and link neither.
package emailjobs

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"

	"tix/internal/emailsend"
	"tix/internal/ticketing"
)

// Kind is what a job sends.
type Kind string

const (
	KindTickets Kind = "tickets" // the paid order's tickets, to its buyer
	KindRefund  Kind = "refund"  // a completed refund's confirmation, to its buyer
	KindResend  Kind = "resend"  // the tickets again, on the operator's request
	KindAlert   Kind = "alert"   // an alert to one of the organizer's owner contacts
	// KindTransfer offers a ticket to a transfer's recipient: the accept
	// link (Alert.URL, kept until the job is final), to To.
	KindTransfer Kind = "transfer"
)

// Status is a job's state. pending → sending (claimed under a lease) → sent,
// or back to pending for a retry, or failed after MaxAttempts; rejected (the
// address is invalid or the provider refused it for good), suppressed (the
// address is on the suppression list) and skipped (tix's own rule said not
// to send: Job.Reason) are final at once.
type Status string

const (
	StatusPending    Status = "pending"
	StatusSending    Status = "sending"
	StatusSent       Status = "sent"
	StatusFailed     Status = "failed"
	StatusRejected   Status = "rejected"
	StatusSuppressed Status = "suppressed"
	StatusSkipped    Status = "skipped"
)

// Why a job is skipped (Job.Reason): nothing was sent.
const (
	// ReasonTestMode: a test-mode email to an address that is none of the
	// organizer's own (its contacts and test recipients).
	ReasonTestMode = "test_mode"
	// ReasonRecipientDailyCap: the address had its organizer's daily
	// number of emails already (Settings.RecipientDailyCap).
	ReasonRecipientDailyCap = "recipient_daily_cap"
)

// Final reports whether nothing more happens to a job in status s.
func (s Status) Final() bool {
	return s == StatusSent || s == StatusFailed || s == StatusRejected || s == StatusSuppressed || s == StatusSkipped
}

// Job is one email owed: written once (put if absent), claimed, sent and
// recorded. Its id is <subject>/<name>: the subject is the order (or, for an
// alert, the organizer) and the name tells the job apart within it (tickets,
// refund, resend.<call id>, alert.<cause>.<n>), so a re-run writes nothing.
type Job struct {
	Subject     string                `json:"subject"` // order id, or organizer id for alerts
	Name        string                `json:"name"`
	Kind        Kind                  `json:"kind"`
	OrganizerID string                `json:"organizer_id"`
	Environment ticketing.Environment `json:"environment,omitempty"`
	OrderID     string                `json:"order_id,omitempty"`
	// To is the alert's recipient; an order's jobs read the buyer's address
	// from the order when sending.
	To    string `json:"to,omitempty"`
	Alert *Alert `json:"alert,omitempty"`

	Status        Status     `json:"status"`
	Attempts      int        `json:"attempts"`
	MaxAttempts   int        `json:"max_attempts"`
	NextAttemptAt time.Time  `json:"next_attempt_at"`
	LeaseUntil    *time.Time `json:"lease_until,omitempty"` // while sending
	ProviderID    string     `json:"provider_id,omitempty"`
	SentAt        *time.Time `json:"sent_at,omitempty"`
	LastError     string     `json:"last_error,omitempty"` // never PII: the provider's error class
	Reason        string     `json:"reason,omitempty"`     // skipped: why (ReasonTestMode, ReasonRecipientDailyCap)
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	Version       int64      `json:"-"`
}

// ID is the job's id: <subject>/<name>.
func (j *Job) ID() string { return j.Subject + "/" + j.Name }

// ParseJobID splits a job id into subject and name.
func ParseJobID(id string) (subject, name string, ok bool) {
	subject, name, ok = strings.Cut(id, "/")
	return subject, name, ok && subject != "" && name != "" && !strings.Contains(name, "/")
}

// DueAt is when the sweep takes the job for lost: a pending job's next
// attempt plus grace, a sending job's lease end. Final jobs are never due.
func (j *Job) DueAt(grace time.Duration) (time.Time, bool) {
	switch {
	case j.Status == StatusPending:
		return j.NextAttemptAt.Add(grace), true
	case j.Status == StatusSending && j.LeaseUntil != nil:
		return *j.LeaseUntil, true
	}
	return time.Time{}, false
}

// Alert is what an owner alert says; it is stored in the job, so the consumer
// renders it without reading anything else.
type Alert struct {
	Cause       string    `json:"cause"` // endpoint_disabled | live_key_revoked | key_many_ips | key_ceiling | key_leaked | partly_refunded_outside
	At          time.Time `json:"at"`
	EndpointID  string    `json:"endpoint_id,omitempty"`
	URL         string    `json:"url,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	Failures    int       `json:"failures,omitempty"`
	LastErrors  []string  `json:"last_errors,omitempty"` // the last failures, newest first
	KeyID       string    `json:"key_id,omitempty"`
	Key         string    `json:"key,omitempty"` // key_leaked: the key's kind and last four characters, never the key
	DistinctIPs int       `json:"distinct_ips,omitempty"`
	Limit       int       `json:"limit,omitempty"`      // key_many_ips: the threshold passed; key_ceiling: the ceiling
	Day         string    `json:"day,omitempty"`        // key_many_ips, key_ceiling: the UTC day, YYYY-MM-DD
	Bucket      string    `json:"bucket,omitempty"`     // key_ceiling: read | write
	OrderID     string    `json:"order_id,omitempty"`   // partly_refunded_outside
	PaymentID   string    `json:"payment_id,omitempty"` // partly_refunded_outside
	Event       string    `json:"event,omitempty"`      // ticket_transfer: the event's title
	Ticket      string    `json:"ticket,omitempty"`     // ticket_transfer: the ticket's number
}

// Identity is how an organizer appears in its emails and whom its alerts reach.
type Identity struct {
	OrganizerID string   `json:"organizer_id"`
	Name        string   `json:"name"`        // the organizer's name
	SenderName  string   `json:"sender_name"` // From's display name ("" = Name)
	ReplyTo     string   `json:"reply_to"`
	Support     string   `json:"support"` // a support contact: an address, phone or URL
	LogoURL     string   `json:"logo_url"`
	Language    string   `json:"language"` // ru | en
	Contacts    []string `json:"contacts"` // owner contact addresses for alerts
	// TestRecipients are the further addresses test-mode emails may go to
	// (besides Contacts); any other buyer's test-mode email is skipped.
	TestRecipients []string `json:"test_recipients"`
}

// MaxTestRecipients bounds an organizer's test allow-list.
const MaxTestRecipients = 20

// OwnAddress reports whether addr is one of the organizer's own addresses
// (a contact or a test recipient), compared as Normalize does.
func (i *Identity) OwnAddress(addr string) bool {
	n := Normalize(addr)
	for _, l := range [][]string{i.Contacts, i.TestRecipients} {
		for _, a := range l {
			if Normalize(a) == n {
				return true
			}
		}
	}
	return false
}

// Languages are the template languages; the first is the default.
var Languages = []string{"ru", "en"}

// Lang is the identity's language, ru when unset.
func (i *Identity) Lang() string {
	if i == nil || i.Language == "" {
		return Languages[0]
	}
	return i.Language
}

// From is the display name of the organizer's emails: its sender name, or
// its name without the characters a sender name may not hold.
func (i *Identity) From() string {
	if i.SenderName != "" {
		return i.SenderName
	}
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(senderNameForbidden, r) || unicode.IsControl(r) {
			return -1
		}
		return r
	}, i.Name)
}

// senderNameForbidden are the characters that would make a display name
// look like, or hide, an address.
const senderNameForbidden = "@<>"

// ValidSenderName refuses a sender name that could pass for an address or
// break a header: at most 64 characters on one line, without '@', '<' or
// '>'. The error says what to change.
func ValidSenderName(name string) error {
	switch {
	case len(name) > 64:
		return errors.New("a sender name has at most 64 characters")
	case strings.ContainsAny(name, senderNameForbidden):
		return errors.New("a sender name may not contain '@', '<' or '>' (it would look like an address): use the organizer's name, e.g. Acme Live")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errors.New("a sender name is one line without control characters")
	}
	return nil
}

// Store errors: ticketing's, the one vocabulary of every store port.
var (
	ErrNotFound     = ticketing.ErrNotFound
	ErrStateChanged = ticketing.ErrStateChanged
)

// Store is the persistence port (the DynamoDB adapter implements it).
type Store interface {
	// CreateJobs writes jobs that do not exist yet, each conditional on its
	// absence; an existing one is left as it is. created counts the new ones.
	CreateJobs(ctx context.Context, jobs []*Job) (created int, err error)
	// GetJob reads a job (strongly consistent); ErrNotFound.
	GetJob(ctx context.Context, id string) (*Job, error)
	// SaveJob writes j conditional on j.Version and bumps it (ErrStateChanged);
	// due is when the sweep takes it (ok false: never, a final job).
	SaveJob(ctx context.Context, j *Job, due time.Time, ok bool) error
	// OrderJobs returns the jobs of an order.
	OrderJobs(ctx context.Context, orderID string) ([]*Job, error)
	// OverdueJobs returns up to limit jobs due at or before now.
	OverdueJobs(ctx context.Context, now time.Time, limit int) ([]*Job, error)
	// Suppressed reports whether an address is on the suppression list.
	Suppressed(ctx context.Context, addr string) (bool, error)
	// GetIdentity reads an organizer's identity (its name at least); ErrNotFound.
	GetIdentity(ctx context.Context, organizerID string) (*Identity, error)
	// ChargeRecipient counts job jobID against the address's emails from the
	// organizer on day (YYYY-MM-DD, UTC), at most limit a day, in one
	// conditional write; the same job counts once. ok false: the day's limit
	// was reached.
	ChargeRecipient(ctx context.Context, organizerID, addr, day, jobID string, limit int) (ok bool, err error)
}

// OrderReader and EventReader read what an order's email shows.
type (
	OrderReader interface {
		GetOrder(ctx context.Context, id string) (*ticketing.Order, error)
	}
	EventReader interface {
		GetEvent(ctx context.Context, organizerID, eventID string, env ticketing.Environment) (*ticketing.Event, error)
	}
)

// KindEmail is the deliveries-queue message kind of an email job.
const KindEmail = "email"

// Message is an email job's deliveries-queue message.
type Message struct {
	Kind  string    `json:"kind"` // KindEmail
	JobID string    `json:"job_id"`
	Due   time.Time `json:"due"`
}

// Queue sends job messages (the deliveries queue, a delay clamped to its maximum).
type Queue interface {
	SendEmail(ctx context.Context, m Message, delay time.Duration) error
}

// Sender is emailsend.Sender, the port the adapters implement.
type Sender = emailsend.Sender
