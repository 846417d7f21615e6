// Package webhook is tix's outbound event delivery (contract section 6):
// endpoints and their secrets, the signed envelope, fan-out of order
// events into deliveries, attempts on the retry schedule, endpoint health,
// outbound limits, the sweep that finds lost work, and redelivery.
//
// It declares the ports it needs (Store, Queue) and imports neither AWS nor
// the HTTP API; its only network use is the outbound POST of an attempt.
package webhook

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"tix/internal/ticketing"
)

// APIVersion is the envelope's api_version (contract section 9 rule 2).
const APIVersion = "2026-06-01"

// Envelope types beyond the order events.
const (
	TypeEndpointVerify = "endpoint.verify"
	TypeWebhookTest    = "webhook.test"
)

// EventTypes are the order event types an endpoint subscribes to when it
// names none.
var EventTypes = []string{ticketing.EventOrderPaid, ticketing.EventOrderCancelled, ticketing.EventOrderRefunded}

// OptInEventTypes are delivered only to endpoints that name them in
// enabled_events: not in the default set, nor in "*" (docs/webhooks.md).
var OptInEventTypes = []string{ticketing.EventTicketCheckedIn, ticketing.EventTicketTransferred}

// EndpointStatus is active or disabled (contract section 3).
type EndpointStatus string

const (
	EndpointActive   EndpointStatus = "active"
	EndpointDisabled EndpointStatus = "disabled"
)

// Endpoint is a receiver registered by an organizer for one environment.
//
// Health fields (ConsecutiveFailures, FailingSince, LastDeliveryAt,
// LastAttemptAt) are changed by atomic counters (Store.EndpointFailed,
// Store.EndpointSucceeded), never by UpdateEndpoint, so that concurrent
// attempts do not lose each other's counts. Everything else is changed by
// UpdateEndpoint under the Version read.
type Endpoint struct {
	ID            string                `json:"id"` // we_...
	OrganizerID   string                `json:"organizer_id"`
	Environment   ticketing.Environment `json:"environment"`
	URL           string                `json:"url"`
	Status        EndpointStatus        `json:"status"`
	EnabledEvents []string              `json:"enabled_events"`
	Description   *string               `json:"description"`
	// Verified is set by a successful endpoint.verify and cleared by a URL change.
	Verified   bool       `json:"verified"`
	VerifiedAt *time.Time `json:"verified_at,omitempty"`
	// Secret is the signing secret sealed with the SecretBox (never plaintext).
	Secret string `json:"-"`
	// OldSecret, the secret before the last rotation at SecretRotatedAt, also
	// signs for Settings.RotationOverlap (24 hours) after it. The overlap is
	// applied when signing, so the deliver function's setting rules.
	OldSecret       string     `json:"-"`
	SecretRotatedAt *time.Time `json:"secret_rotated_at,omitempty"`

	ConsecutiveFailures int        `json:"consecutive_failures"`
	FailingSince        *time.Time `json:"failing_since,omitempty"`   // first failure of the current streak
	LastDeliveryAt      *time.Time `json:"last_delivery_at"`          // last successful delivery
	LastAttemptAt       *time.Time `json:"last_attempt_at,omitempty"` // last attempt, whatever its outcome
	DisabledAt          *time.Time `json:"disabled_at,omitempty"`     //
	DisabledReason      string     `json:"disabled_reason,omitempty"` // why it was disabled (operator or health rule)

	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Version   int64     `json:"-"`
}

// Subscribes reports whether the endpoint wants events of type typ.
func (e *Endpoint) Subscribes(typ string) bool {
	optIn := slices.Contains(OptInEventTypes, typ)
	for _, t := range e.EnabledEvents {
		if t == typ || (t == "*" && !optIn) {
			return true
		}
	}
	return false
}

// Receiving reports whether the endpoint gets order events: active and verified.
func (e *Endpoint) Receiving() bool { return e.Status == EndpointActive && e.Verified }

// DeliveryStatus is pending, delivered, failed or skipped (contract section 3).
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliveryDelivered DeliveryStatus = "delivered"
	DeliveryFailed    DeliveryStatus = "failed"
	DeliverySkipped   DeliveryStatus = "skipped"
)

// Delivery is one event for one endpoint: its attempts follow the schedule
// until one is acknowledged (delivered) or they run out (failed). Redelivery
// starts a new generation (Gen) with a fresh schedule.
type Delivery struct {
	ID             string                `json:"id"` // whd_<event>_<endpoint>, one per event and endpoint
	OrganizerID    string                `json:"organizer_id"`
	Environment    ticketing.Environment `json:"environment"`
	EndpointID     string                `json:"endpoint_id"`
	EventID        string                `json:"event_id"`
	EventType      string                `json:"event_type"`
	OrderID        *string               `json:"order_id"`
	Status         DeliveryStatus        `json:"status"`
	Attempts       int                   `json:"attempts"` // attempts of the current generation
	MaxAttempts    int                   `json:"max_attempts"`
	Gen            int                   `json:"gen"`
	LastStatusCode *int                  `json:"last_status_code"`
	LastError      *string               `json:"last_error"`
	NextAttemptAt  time.Time             `json:"next_attempt_at"`
	DeliveredAt    *time.Time            `json:"delivered_at"`
	FailedAt       *time.Time            `json:"failed_at"`
	CreatedAt      time.Time             `json:"created_at"`
	// Log is every attempt, oldest first (the last MaxLog are kept).
	Log []Attempt `json:"log"`
	// RecheckAt is when the sweep takes a pending delivery for lost: its next
	// attempt is due and no attempt has been recorded since. Only pending
	// deliveries have it (the store's sparse due index).
	RecheckAt *time.Time `json:"-"`
	Version   int64      `json:"-"`
}

// MaxLog is how many attempts a delivery's log keeps.
const MaxLog = 32

// Attempt is one POST of a delivery.
type Attempt struct {
	Gen        int       `json:"gen"`
	N          int       `json:"n"` // 1-based within the generation
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty"`
	Error      string    `json:"error,omitempty"`
	DurationMS int64     `json:"duration_ms"`
}

// DeliveryQuery is GET /webhook-deliveries.
type DeliveryQuery struct {
	OrganizerID string
	Environment ticketing.Environment
	EndpointID  string         // optional
	Status      DeliveryStatus // optional
	Limit       int
	Cursor      string
}

// DeliveryPage is one page of deliveries, newest first.
type DeliveryPage struct {
	Deliveries []*Delivery
	NextCursor string
	HasMore    bool
}

// EventQuery is GET /order-events.
type EventQuery struct {
	OrganizerID  string
	Environment  ticketing.Environment
	Type         string    // optional
	OrderID      string    // optional
	CreatedAfter time.Time // optional (zero: none), inclusive
	Limit        int
	Cursor       string
}

// EventPage is one page of the event log, newest first.
type EventPage struct {
	Events     []*ticketing.OrderEvent
	NextCursor string
	HasMore    bool
}

// Store errors.
var (
	// ErrNotFound: no such endpoint, delivery or event (ticketing's).
	ErrNotFound = ticketing.ErrNotFound
	// ErrStateChanged: the item changed since it was read (version or state
	// condition failed); the caller re-reads or gives up (ticketing's).
	ErrStateChanged = ticketing.ErrStateChanged
	// ErrTooManyEndpoints: the organizer's environment has MaxEndpoints already.
	ErrTooManyEndpoints = errors.New("too many endpoints")
)

// DeliveryID is the id of the delivery of event eventID (evt_X) to endpoint
// endpointID (we_Y): whd_X_Y. One event reaches one endpoint through one
// delivery, so fan-out is idempotent, and the id locates the delivery beside
// its event in the store.
func DeliveryID(eventID, endpointID string) string {
	return "whd_" + strings.TrimPrefix(eventID, "evt_") + "_" + strings.TrimPrefix(endpointID, "we_")
}

// ParseDeliveryID returns the event and endpoint ids of a delivery id; ok is
// false when id is not one.
func ParseDeliveryID(id string) (eventID, endpointID string, ok bool) {
	rest, found := strings.CutPrefix(id, "whd_")
	if !found {
		return "", "", false
	}
	ev, ep, found := strings.Cut(rest, "_")
	if !found || ev == "" || ep == "" || strings.Contains(ep, "_") || !idChars(ev) || !idChars(ep) {
		return "", "", false
	}
	return "evt_" + ev, "we_" + ep, true
}

func idChars(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// Store is the persistence port (the DynamoDB adapter implements it), made of
// one role interface per concern: endpoints, the outbox fan-out, deliveries
// and outbound limits. Not found is ErrNotFound, never a nil result.
type Store interface {
	EndpointStore
	OutboxStore
	DeliveryStore
	OutboundLimiter
}

// EndpointStore keeps endpoints and their health counters.
type EndpointStore interface {
	// CreateEndpoint writes a new endpoint unless the organizer's environment
	// already has max endpoints (ErrTooManyEndpoints).
	CreateEndpoint(ctx context.Context, e *Endpoint, max int) error
	// GetEndpoint reads one endpoint (strongly consistent); ErrNotFound.
	GetEndpoint(ctx context.Context, id string) (*Endpoint, error)
	// ListEndpoints returns every endpoint of an organizer's environment, oldest first.
	ListEndpoints(ctx context.Context, org string, env ticketing.Environment) ([]*Endpoint, error)
	// UpdateEndpoint writes every field but the health fields, conditional on
	// e.Version, and bumps the version (ErrStateChanged, ErrNotFound). With
	// resetHealth it also zeroes ConsecutiveFailures and clears FailingSince.
	UpdateEndpoint(ctx context.Context, e *Endpoint, resetHealth bool) error
	// DeleteEndpoint removes an endpoint, conditional on e.Version.
	DeleteEndpoint(ctx context.Context, e *Endpoint) error
	// EndpointFailed counts a failed attempt atomically (ConsecutiveFailures+1,
	// FailingSince set if unset, LastAttemptAt = at) and returns the endpoint after it.
	EndpointFailed(ctx context.Context, id string, at time.Time) (*Endpoint, error)
	// EndpointSucceeded records a delivered attempt atomically
	// (ConsecutiveFailures = 0, FailingSince cleared, LastDeliveryAt and LastAttemptAt = at).
	EndpointSucceeded(ctx context.Context, id string, at time.Time) error
	// DisableEndpoint disables an active endpoint (condition: status active) with a
	// reason; it reports false when the endpoint was not active any more.
	DisableEndpoint(ctx context.Context, id, reason string, at time.Time) (bool, error)
}

// OutboxStore reads the order events waiting for fan-out and dispatches them
// into deliveries.
type OutboxStore interface {
	// GetOrderEvent reads an outbox event; dispatched tells whether it has been
	// fanned out (ErrNotFound).
	GetOrderEvent(ctx context.Context, id string) (ev *ticketing.OrderEvent, dispatched bool, err error)
	// UndispatchedEvents returns up to limit events created at or before
	// olderThan that have not been fanned out, oldest first per shard.
	UndispatchedEvents(ctx context.Context, olderThan time.Time, limit int) ([]string, error)
	// Dispatch writes the deliveries (each conditional on not existing) and
	// marks the event dispatched (conditional on not being dispatched), in one
	// transaction: ErrStateChanged when it was dispatched already. What the
	// event owes its subscribers (owed) is written in the same transaction,
	// each record only if none with its ID exists yet.
	Dispatch(ctx context.Context, eventID string, ds []*Delivery, owed ...Record) error
}

// DeliveryStore keeps deliveries: read for an attempt, saved under their
// version, listed, and found by the sweep.
type DeliveryStore interface {
	// GetDelivery reads a delivery (strongly consistent); ErrNotFound.
	GetDelivery(ctx context.Context, id string) (*Delivery, error)
	// LoadAttempt reads a delivery, its event and its endpoint in one request
	// (strongly consistent): ErrNotFound without the delivery or its event; the
	// endpoint alone may be gone (deleted), and is then nil.
	LoadAttempt(ctx context.Context, deliveryID string) (*Delivery, *ticketing.OrderEvent, *Endpoint, error)
	// SaveDelivery writes d conditional on d.Version and bumps it
	// (ErrStateChanged). A pending delivery is kept in the due index by
	// RecheckAt; any other status leaves it.
	SaveDelivery(ctx context.Context, d *Delivery) error
	// ListDeliveries pages an organizer environment's deliveries, newest first.
	// A cursor not issued for the same query is ticketing.Invalid("cursor", ...).
	ListDeliveries(ctx context.Context, q DeliveryQuery) (*DeliveryPage, error)
	// ListOrderEvents pages an organizer environment's events newest first (the event log).
	ListOrderEvents(ctx context.Context, q EventQuery) (*EventPage, error)
	// OrderDeliveries are the deliveries of one order's events, oldest event first.
	OrderDeliveries(ctx context.Context, orderID string) ([]*Delivery, error)
	// PendingDeliveries returns up to limit pending deliveries of one endpoint (for skipping on disable).
	PendingDeliveries(ctx context.Context, endpointID string, limit int) ([]*Delivery, error)
	// OverdueDeliveries returns up to limit pending deliveries whose RecheckAt is at or before now.
	OverdueDeliveries(ctx context.Context, now time.Time, limit int) ([]*Delivery, error)
}

// OutboundLimiter counts outbound POSTs in fixed one-second windows.
type OutboundLimiter interface {
	// TakeOutbound takes one request from the fixed one-second window of key
	// (a receiving domain, or "*" for all), limit per window. It reports false
	// when the window is full.
	TakeOutbound(ctx context.Context, key string, limit int, now time.Time) (bool, error)
}

// Message kinds on the deliveries queue.
const (
	KindFanout  = "fanout"  // fan an outbox event out into deliveries
	KindAttempt = "attempt" // make attempt N of generation Gen of a delivery, at Due
)

// Message is one deliveries-queue message.
type Message struct {
	Kind       string    `json:"kind"`
	EventID    string    `json:"event_id,omitempty"`    // fanout
	DeliveryID string    `json:"delivery_id,omitempty"` // attempt
	Gen        int       `json:"gen,omitempty"`
	N          int       `json:"n,omitempty"`
	Due        time.Time `json:"due"`
}

// Queue is the deliveries-queue port. Send delays the message by delay,
// clamped to the queue's maximum (15 minutes on SQS); a message due later
// arrives early and is sent on again (several hops).
type Queue interface {
	Send(ctx context.Context, m Message, delay time.Duration) error
}

// Record is what an event owes a subscriber (an email job): the store writes
// it in the event's dispatch transaction, unless a record with its ID exists.
// The store knows the subscribers' record types; this package does not.
type Record interface {
	ID() string
}

// Subscriber follows the outbox's events besides the endpoints: the email
// pipeline (internal/emailjobs) implements it, so that this package knows
// nothing of email.
type Subscriber interface {
	// Owed returns the records ev owes the subscriber, written in the
	// event's dispatch.
	Owed(ev *ticketing.OrderEvent, now time.Time) []Record
	// Dispatched is told the event's dispatch wrote the records (e.g. to
	// queue their messages; a failure there is the subscriber's sweep's).
	Dispatched(ctx context.Context, records []Record)
}

// OwnerAlerts tells an organizer's owners that an endpoint was disabled by
// its failures (internal/emailjobs implements it).
type OwnerAlerts interface {
	EndpointDisabled(ctx context.Context, org, endpointID, url, reason string, failures int, lastErrors []string, at time.Time)
}
