// Package auth holds what an API key is: its format, its hash, its scopes, and
// the origin and IP rules that bind it. It knows nothing of HTTP or storage.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math/big"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"tix/internal/ticketing"
)

// KeyType is sk (secret, server only) or pk (publishable, browsers).
type KeyType string

// Key types.
const (
	Secret      KeyType = "sk"
	Publishable KeyType = "pk"
)

// Scopes named in the contract (section 5, rule 10).
const (
	ScopeEventsRead       = "events:read"
	ScopeSeatingRead      = "seating:read"
	ScopeAvailabilityRead = "availability:read"
	ScopeHoldsWrite       = "holds:write"
	ScopeOrdersWrite      = "orders:write"
	ScopeOrdersList       = "orders:list"
	ScopeOrdersStatus     = "orders:status"
	ScopeOrdersRead       = "orders:read"
	ScopeOrdersRefund     = "orders:refund"
	ScopeWebhooksManage   = "webhooks:manage"
	// ScopeCheckinsWrite admits tickets at the door (POST /v1/check-ins);
	// ScopeCheckinsUndo undoes a scan, a supervisor's action (docs/door.md).
	ScopeCheckinsWrite = "checkins:write"
	ScopeCheckinsUndo  = "checkins:undo"
)

// AllScopes lists every scope, the default set of a secret key.
var AllScopes = []string{
	ScopeEventsRead, ScopeSeatingRead, ScopeAvailabilityRead, ScopeHoldsWrite,
	ScopeOrdersWrite, ScopeOrdersList, ScopeOrdersStatus, ScopeOrdersRead,
	ScopeOrdersRefund, ScopeWebhooksManage, ScopeCheckinsWrite, ScopeCheckinsUndo,
}

// DoorScopes are the scopes a key bound to events (Key.Events) may hold:
// nothing that reads buyer data.
var DoorScopes = []string{ScopeCheckinsWrite, ScopeCheckinsUndo}

// PublishableScopes is the default set of a publishable key: what a storefront in a
// browser needs to browse, hold seats, create an order and poll it. It can never
// hold the secret-only scopes (orders:list, orders:read, orders:refund,
// webhooks:manage): their routes reject pk keys anyway.
var PublishableScopes = []string{
	ScopeEventsRead, ScopeSeatingRead, ScopeAvailabilityRead, ScopeHoldsWrite,
	ScopeOrdersWrite, ScopeOrdersStatus,
}

// secretOnlyScopes cannot be granted to a publishable key.
var secretOnlyScopes = []string{ScopeOrdersList, ScopeOrdersRead, ScopeOrdersRefund, ScopeWebhooksManage, ScopeCheckinsWrite, ScopeCheckinsUndo}

// DefaultScopes returns the documented default scope set of a key type.
func DefaultScopes(t KeyType) []string {
	if t == Publishable {
		return slices.Clone(PublishableScopes)
	}
	return slices.Clone(AllScopes)
}

// Key is an API key as stored: never the secret itself, only its hash.
type Key struct {
	ID             string                `json:"id"`
	OrganizerID    string                `json:"organizer_id"`
	Type           KeyType               `json:"type"`
	Environment    ticketing.Environment `json:"environment"`
	Name           string                `json:"name"`
	Scopes         []string              `json:"scopes"`
	AllowedOrigins []string              `json:"allowed_origins"`
	AllowedIPs     []string              `json:"allowed_ips"`
	Last4          string                `json:"last4"`
	CreatedAt      time.Time             `json:"created_at"`
	ExpiresAt      *time.Time            `json:"expires_at"`
	RevokedAt      *time.Time            `json:"revoked_at"`
	// RevokeReason says why a revoked key was revoked: RevokedLeaked, or ""
	// (revoked by its operator).
	RevokeReason string `json:"revoke_reason,omitempty"`
	// LeakSource is where a leaked key was found: the public URL a secret
	// scanning partner reported (or the operator gave), "" when none was given.
	LeakSource string `json:"leak_source,omitempty"`
	// RateLimits are the operator's budgets for this key (tixctl keys
	// set-budget); nil, or a zero field, takes the service's default.
	RateLimits *RateLimits `json:"rate_limits"`
	// Events binds a door key (check-in scopes only) to these events: it
	// admits no ticket of another (docs/door.md). Empty: every event.
	Events []string `json:"events,omitempty"`
}

// RateLimits are an operator's budgets for one key, in requests per rate-limit
// window. For a secret key, Reads and Writes are the key's budgets. For a
// publishable key, IPReads and IPWrites are each client network's budgets
// (an IPv4 address or an IPv6 /64) and Reads and Writes the key's ceiling, all
// clients together. Zero takes the service's default.
type RateLimits struct {
	Reads    int `json:"reads"`
	Writes   int `json:"writes"`
	IPReads  int `json:"ip_reads"`
	IPWrites int `json:"ip_writes"`
}

// RevokedLeaked is the RevokeReason of a key revoked because it was found in a
// public source.
const RevokedLeaked = "leaked"

// Revocation is when and why a key is revoked.
type Revocation struct {
	At     time.Time
	Reason string // RevokedLeaked, or "" (by its operator)
	Source string // a leaked key: where it was found
}

// Usable reports whether the key may authenticate at now (not revoked, not expired).
func (k *Key) Usable(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// Status is how a key is listed at now: active, revoked or expired.
func (k *Key) Status(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case !k.Usable(now):
		return "expired"
	}
	return "active"
}

// HasScope reports whether the key was granted scope.
func (k *Key) HasScope(scope string) bool { return slices.Contains(k.Scopes, scope) }

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomString returns n characters drawn uniformly from alphabet by crypto/rand.
func RandomString(alphabet string, n int) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err))
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

// secretLen is the random part of a key: 32 base62 characters, about 190 bits.
const secretLen = 32

// checksumLen is the checksum that ends a key issued with one: the CRC-32
// (IEEE) of the random part, in base62, most significant digit first, padded
// with '0' to 6 characters (62^6 > 2^32). A scanner that finds the pattern
// recomputes it, so a random string of the right shape matches only once in
// about four billion (docs/secret-scanning.md gives the rule to operators).
const checksumLen = 6

// SecretPattern is the regular expression of the secret keys tix issues with a
// checksum, what an operator registers with a secret scanning partner
// (docs/secret-scanning.md). Keys issued before the checksum (32 characters
// after the environment, none after) still authenticate but do not match it.
const SecretPattern = `\bsk_(?:test|live)_[0-9A-Za-z]{38}\b`

// NewSecret makes the secret of a new key: the type, the environment, 32
// random base62 characters and their 6-character checksum, e.g.
// sk_test_<32 base62 chars><6 base62 chars>.
func NewSecret(t KeyType, env ticketing.Environment) string {
	random := RandomString(base62, secretLen)
	return fmt.Sprintf("%s_%s_%s%s", t, env, random, Checksum(random))
}

// Checksum is the checksum characters of a key's random part (checksumLen).
func Checksum(random string) string {
	v := crc32.ChecksumIEEE([]byte(random))
	out := make([]byte, checksumLen)
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = base62[v%62]
		v /= 62
	}
	return string(out)
}

// NewKeyID makes a public key id (key_...), safe to log and show.
func NewKeyID() string { return "key_" + RandomString(base62, 16) }

// Hash is how a key is stored and looked up: hex SHA-256 of the whole secret.
// Keys carry ~190 random bits, so a fast hash is enough (no password stretching).
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// ParseSecret checks a presented key's shape and returns its type and
// environment: the type, the environment and either 32 base62 characters
// (a key issued before the checksum) or 38 whose last 6 are the checksum of
// the first 32. It returns ok=false for anything malformed, which the caller
// answers with 401.
func ParseSecret(s string) (KeyType, ticketing.Environment, bool) {
	parts := strings.SplitN(s, "_", 3)
	if len(parts) != 3 || (len(parts[2]) != secretLen && len(parts[2]) != secretLen+checksumLen) {
		return "", "", false
	}
	t, env := KeyType(parts[0]), ticketing.Environment(parts[1])
	if (t != Secret && t != Publishable) || !env.Valid() {
		return "", "", false
	}
	for _, c := range parts[2] {
		if !strings.ContainsRune(base62, c) {
			return "", "", false
		}
	}
	if len(parts[2]) > secretLen && parts[2][secretLen:] != Checksum(parts[2][:secretLen]) {
		return "", "", false
	}
	return t, env, true
}

// HasChecksum reports whether s is a well-formed key that carries a valid
// checksum (keys issued before the checksum do not).
func HasChecksum(s string) bool {
	_, _, ok := ParseSecret(s)
	return ok && len(s) > len("sk_test_")+secretLen
}

// ValidateScopes checks a requested scope list for a key type.
func ValidateScopes(t KeyType, scopes []string) error {
	for _, s := range scopes {
		if !slices.Contains(AllScopes, s) {
			return fmt.Errorf("unknown scope %q (known: %s)", s, strings.Join(AllScopes, ", "))
		}
		if t == Publishable && slices.Contains(secretOnlyScopes, s) {
			return fmt.Errorf("scope %q is for secret keys only", s)
		}
	}
	return nil
}

// NormalizeOrigin turns "https://Shop.example:443/" into "https://shop.example".
func NormalizeOrigin(o string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("origin %q must look like https://shop.example or http://localhost:3000", o)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("origin %q must be scheme://host[:port] only", o)
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, nil
}

// OriginAllowed reports whether the request's Origin header matches the key's list.
func (k *Key) OriginAllowed(origin string) bool {
	n, err := NormalizeOrigin(origin)
	if err != nil {
		return false
	}
	return slices.Contains(k.AllowedOrigins, n)
}

// ParseAllowedIP accepts an address or a CIDR and returns its canonical prefix.
func ParseAllowedIP(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// IPAllowed reports whether ip passes the key's allow-list (an empty list allows all).
func (k *Key) IPAllowed(ip string) bool {
	if len(k.AllowedIPs) == 0 {
		return true
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, s := range k.AllowedIPs {
		if p, err := ParseAllowedIP(s); err == nil && p.Contains(a) {
			return true
		}
	}
	return false
}

// Budget is the state of a rate-limit window after a request was counted.
type Budget struct {
	Limit     int
	Remaining int
	// Reset is when the current window ends.
	Reset time.Time
	// Admitted is false when the request is over the budget.
	Admitted bool
}

// ErrUnknownKey is returned by a key lookup when no key has that hash.
var ErrUnknownKey = errors.New("unknown key")
