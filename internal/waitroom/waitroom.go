// Package waitroom is the on-sale waiting room (docs/waiting-room.md): an
// organizer protects an occurrence's on-sale; visitors answer a proof-of-work
// challenge to join its queue, read their place, and are admitted at the
// event's rate; publishable-key holds and orders of a protected occurrence need
// an admission, and an admission that bought is spent. Joining and status
// share no item: positions derive from the join time, the random draw and
// sharded join counters that each process reads into a cache. The package
// knows neither HTTP nor AWS; the store implements Store.
package waitroom

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"tix/internal/clock"
	"tix/internal/ticketing"
)

// Protection is an occurrence's protected on-sale.
type Protection struct {
	EventID      string
	OccurrenceID string // "": every occurrence of the event
	ticketing.Tenant
	OpensAt time.Time
	// Rate is how many visitors a second are admitted once it opens.
	Rate int
	// Difficulty is the proof of work's leading zero bits.
	Difficulty int
	CreatedAt  time.Time
}

// Covers reports whether p protects occurrence occ of its event ("" is the
// request's default occurrence, which p covers too).
func (p *Protection) Covers(occ string) bool {
	return p.OccurrenceID == "" || occ == "" || occ == p.OccurrenceID
}

// Store is what the waiting room keeps in the table (internal/store.WaitingRoom;
// internal/inmem for the domain's tests).
type Store interface {
	// PutProtection writes p on its event unless the event's protection
	// belongs to another organizer (ErrStateChanged).
	PutProtection(ctx context.Context, p Protection) error
	// GetProtection reads an event's protection (ticketing.ErrNotFound when none).
	GetProtection(ctx context.Context, eventID string) (*Protection, error)
	// RecordAnswer records a challenge's answer once (ErrAnswerUsed after).
	RecordAnswer(ctx context.Context, challengeID string, expires time.Time) error
	// CountJoin adds one join to shard of bucket of eventID's counters.
	CountJoin(ctx context.Context, eventID string, shard, bucket int, expires time.Time) error
	// JoinCounts sums the joins of eventID's buckets from..to (inclusive)
	// over every shard, read consistently.
	JoinCounts(ctx context.Context, eventID string, shards, from, to int) (map[int]int, error)
	// ClaimAdmission spends admission id for claim (the order's idempotency
	// key): it succeeds once, and again for the same claim; ErrAdmissionSpent
	// for another.
	ClaimAdmission(ctx context.Context, id, claim string, expires time.Time) error
	// ReleaseAdmission gives back claim's spend (nothing when another holds it).
	ReleaseAdmission(ctx context.Context, id, claim string) error
	// AdmissionSpent reports whether an order spent admission id.
	AdmissionSpent(ctx context.Context, id string) (bool, error)
}

// Store errors.
var (
	ErrAnswerUsed     = errors.New("waitroom: challenge answered already")
	ErrAdmissionSpent = errors.New("waitroom: admission spent")
)

// Settings are the waiting room's tunables (TIX_QUEUE_*).
type Settings struct {
	Secret       []byte        // signs every token
	ChallengeTTL time.Duration // how long a challenge may be answered
	AdmissionTTL time.Duration // how long an admission is valid once released
	QueueTTL     time.Duration // how long a queue token is valid after the opening
	Difficulty   int           // default proof of work, leading zero bits
	Rate         int           // default admissions per second
	// Bucket is the width of a join-time bucket after the opening; Settle
	// how long after a bucket's end its counts are final (the slowest join's
	// write and a consistent read).
	Bucket, Settle time.Duration
	// Shards is the number of join counters per bucket; CacheTTL how long a
	// process reuses the counts it read.
	Shards   int
	CacheTTL time.Duration
}

// DefaultRate is the admissions per second of a protection that names none:
// the orders per second `make onsale-model` requires one general-admission
// tier to take (docs/waiting-room.md, Rate).
const DefaultRate = 5000

// DefaultSettings are the documented defaults.
var DefaultSettings = Settings{ChallengeTTL: 2 * time.Minute, AdmissionTTL: 15 * time.Minute, QueueTTL: 6 * time.Hour,
	Difficulty: 16, Rate: DefaultRate, Bucket: time.Second, Settle: 2 * time.Second, Shards: 128, CacheTTL: time.Second}

// Limits of a protection's settings.
const (
	MaxDifficulty = 30
	MaxRate       = 1_000_000
)

// Service is the waiting room.
type Service struct {
	Store    Store
	Clock    clock.Clock
	Settings Settings
	// Events finds the events ProtectEvent protects (the store's catalog).
	Events Events

	sig    signer
	counts countCache
	prot   protectionCache
}

// New returns the service over st.
func New(st Store, c clock.Clock, s Settings) *Service {
	if c == nil {
		c = clock.System{}
	}
	d := DefaultSettings
	for _, f := range []struct{ v, def *time.Duration }{{&s.ChallengeTTL, &d.ChallengeTTL}, {&s.AdmissionTTL, &d.AdmissionTTL},
		{&s.QueueTTL, &d.QueueTTL}, {&s.Bucket, &d.Bucket}, {&s.Settle, &d.Settle}, {&s.CacheTTL, &d.CacheTTL}} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if s.Difficulty <= 0 {
		s.Difficulty = d.Difficulty
	}
	if s.Rate <= 0 {
		s.Rate = d.Rate
	}
	if s.Shards <= 0 {
		s.Shards = d.Shards
	}
	return &Service{Store: st, Clock: c, Settings: s, sig: newSigner(s.Secret)}
}

// Network is what queue tokens and admissions are bound to: the /24 of an
// IPv4 address, the /64 of an IPv6 one. A carrier's NAT may move a phone
// between addresses of one pool mid-session, but rarely out of its /24; a
// token copied to another network fails.
func Network(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	bits := 64
	if a.Is4() {
		bits = 24
	}
	p, _ := a.Prefix(bits)
	return p.String()
}
