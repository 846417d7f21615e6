// Package account is the organizer dashboard's accounts: people (email and
// password), their memberships in organizers with a role, server-side
// sessions, single-use email links, the audit log, and the storage port
// they need. It knows nothing of HTTP or DynamoDB (docs/dashboard.md).
package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"tix/internal/ticketing"
)

// Role is what a member may do in its organizer.
type Role string

// The roles (docs/dashboard.md, Members and roles).
const (
	Owner     Role = "owner"     // everything: members, payments, keys, the audit log
	Developer Role = "developer" // API keys and webhook endpoints
	Support   Role = "support"   // orders, refunds, resending tickets
	Viewer    Role = "viewer"    // reads the overview, events and orders
)

// Roles lists every role, the most powerful first.
var Roles = []Role{Owner, Developer, Support, Viewer}

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	for _, x := range Roles {
		if r == x {
			return true
		}
	}
	return false
}

// Permission is one thing a page or action needs.
type Permission string

// Permissions.
const (
	SeeOverview   Permission = "overview"    // the organizer's home page
	ManageAPI     Permission = "api"         // API keys and webhook endpoints: see and change
	ManageMembers Permission = "members"     // invite and remove members
	ReadAudit     Permission = "audit"       // the audit log
	ManageOrders  Permission = "orders"      // refunds, resending tickets
	ReadOrders    Permission = "orders:read" // orders, read only
	ReadEvents    Permission = "events"      // the events with their stock and sales
	ImportCatalog Permission = "catalog"     // upload a catalog import file (events, tiers, prices)
	// ManagePayments: connect the T-Bank terminal, receipt settings.
	ManagePayments Permission = "payments"
	// ManageSettings: email identity and contacts, language, time zone, test allow-list.
	ManageSettings Permission = "settings"
	// ManageOnsales: put a waiting room in front of an on-sale (docs/waiting-room.md).
	ManageOnsales Permission = "onsales"
)

var grants = map[Role][]Permission{
	Owner:     {SeeOverview, ManageAPI, ManageMembers, ReadAudit, ManageOrders, ReadOrders, ReadEvents, ImportCatalog, ManagePayments, ManageSettings, ManageOnsales},
	Developer: {SeeOverview, ManageAPI, ReadOrders, ReadEvents, ImportCatalog, ManageOnsales},
	Support:   {SeeOverview, ManageOrders, ReadOrders, ReadEvents},
	Viewer:    {SeeOverview, ReadOrders, ReadEvents},
}

// Can reports whether role r has permission p.
func (r Role) Can(p Permission) bool {
	for _, g := range grants[r] {
		if g == p {
			return true
		}
	}
	return false
}

// User is a person who signs in to the dashboard, identified by its email
// address (normalized: trimmed, lower case).
type User struct {
	Email        string     `json:"email"`
	PasswordHash string     `json:"password_hash"` // argon2id, PHC string (password.go)
	VerifiedAt   *time.Time `json:"verified_at"`   // nil until the link of the verification email is opened
	CreatedAt    time.Time  `json:"created_at"`
	// SessionEpoch counts the password's changes: a session started under
	// an earlier epoch is over (SetPassword ends every session).
	SessionEpoch int `json:"session_epoch,omitempty"`
}

// Member is a user's membership of one organizer.
type Member struct {
	OrganizerID string    `json:"organizer_id"`
	Email       string    `json:"email"`
	Role        Role      `json:"role"`
	AddedAt     time.Time `json:"added_at"`
	AddedBy     string    `json:"added_by"` // the inviting owner's email, "signup" or "operator"
}

// Session is a signed-in browser. The store keeps it under the SHA-256 of
// its id (the cookie's value), never the id itself.
type Session struct {
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	IP        string    `json:"ip"`
	Epoch     int       `json:"epoch,omitempty"` // the user's SessionEpoch at sign-in
}

// Link purposes: what an emailed single-use link does.
const (
	PurposeVerify = "verify" // confirms a new account's email address
	PurposeReset  = "reset"  // sets a new password
	PurposeInvite = "invite" // joins an organizer with a role
	// A passkey ceremony's state, bound to the browser by a cookie holding
	// the secret (never emailed): registering a passkey, signing in with one.
	PurposePasskeyAdd    = "passkey.add"
	PurposePasskeySignIn = "passkey.signin"
)

// Token is what an emailed link stands for, kept under the SHA-256 of the
// link's secret; taking it deletes it, so a link works once.
type Token struct {
	Purpose     string    `json:"purpose"`
	Email       string    `json:"email"`
	OrganizerID string    `json:"organizer_id,omitempty"` // invite
	Role        Role      `json:"role,omitempty"`         // invite
	InvitedBy   string    `json:"invited_by,omitempty"`   // invite
	Data        string    `json:"data,omitempty"`         // a passkey ceremony's state (passkey.go)
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// Entry is one line of an organizer's audit log: who did what, when, from where.
type Entry struct {
	OrganizerID string    `json:"organizer_id"`
	At          time.Time `json:"at"`
	Actor       string    `json:"actor"`  // the member's email, or "operator"
	Action      string    `json:"action"` // key.create, webhook.test, member.invite, ...
	Target      string    `json:"target"` // the object's id or the invited address
	Detail      string    `json:"detail,omitempty"`
	IP          string    `json:"ip"`
}

// Settings are an organizer's dashboard preferences.
type Settings struct {
	OrganizerID string `json:"organizer_id"`
	TimeZone    string `json:"time_zone"` // IANA; times are shown in it
}

// Location is the settings' time zone (Europe/Moscow when unset or unknown).
func (s *Settings) Location() *time.Location {
	if s != nil && s.TimeZone != "" {
		if l, err := time.LoadLocation(s.TimeZone); err == nil {
			return l
		}
	}
	l, err := time.LoadLocation(DefaultTimeZone)
	if err != nil {
		return time.UTC
	}
	return l
}

// DefaultTimeZone is a new organizer's time zone.
const DefaultTimeZone = "Europe/Moscow"

// Store errors.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
)

// Store is the storage the accounts need; internal/store implements it on
// the single table (conditional writes: an email has one account, a link is
// taken once, a member is added once).
type Store interface {
	// SignUp writes a new organizer, its first user as its owner and its
	// settings in one transaction; ErrExists when the email has an account.
	SignUp(ctx context.Context, o ticketing.Organizer, u User, m Member, s Settings) error
	// CreateUser writes a user without a membership (an invited person);
	// ErrExists when the email has an account.
	CreateUser(ctx context.Context, u User) error
	GetUser(ctx context.Context, email string) (*User, error)
	MarkVerified(ctx context.Context, email string, at time.Time) error
	// SetPassword replaces the user's password hash and ends every session
	// of the user (one write: the hash and SessionEpoch+1).
	SetPassword(ctx context.Context, email, hash string) error

	// AddMember adds m; ErrExists when the email is a member already.
	AddMember(ctx context.Context, m Member) error
	GetMember(ctx context.Context, org, email string) (*Member, error)
	RemoveMember(ctx context.Context, org, email string) error
	ListMembers(ctx context.Context, org string) ([]Member, error)
	// Memberships lists the organizers an email is a member of.
	Memberships(ctx context.Context, email string) ([]Member, error)

	CreateSession(ctx context.Context, hash string, s Session) error
	GetSession(ctx context.Context, hash string) (*Session, error)
	DeleteSession(ctx context.Context, hash string) error

	CreateToken(ctx context.Context, hash string, t Token) error
	// GetToken reads a token without taking it (a form shown before the link is used).
	GetToken(ctx context.Context, hash string) (*Token, error)
	// TakeToken deletes the token and returns it: a second taker gets ErrNotFound.
	TakeToken(ctx context.Context, hash string) (*Token, error)

	AddEntry(ctx context.Context, e Entry) error
	// Entries lists an organizer's audit log, newest first, at most limit.
	Entries(ctx context.Context, org string, limit int) ([]Entry, error)

	GetSettings(ctx context.Context, org string) (*Settings, error)
	// SetTimeZone changes an organizer's time zone (an IANA name the caller checked).
	SetTimeZone(ctx context.Context, org, zone string) error
}

// NormalizeEmail is how addresses are compared and stored.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// NewSecret is a random URL-safe secret of 32 bytes (a session id or a link's secret).
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashSecret is how a session id or a link's secret is stored: hex SHA-256.
// They carry 256 random bits, so a fast hash is enough.
func HashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Link is a new single-use link's secret and what it stands for, stored
// under the secret's hash; the caller puts the secret in the link it emails.
func Link(ctx context.Context, st Store, t Token) (string, error) {
	secret := NewSecret()
	if err := st.CreateToken(ctx, HashSecret(secret), t); err != nil {
		return "", err
	}
	return secret, nil
}
