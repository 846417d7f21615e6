package auth

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"tix/internal/ticketing"
)

// KeyRequest is what creating a key takes, from tixctl keys create or the
// dashboard's "API and webhooks" page: both build keys with NewKey, so the
// same rules apply.
type KeyRequest struct {
	OrganizerID string
	Type        KeyType
	Environment ticketing.Environment
	Name        string
	Scopes      []string // empty: the type's default set
	Origins     []string // publishable keys: at least one browser origin
	IPs         []string // secret keys: an optional allow-list of addresses or CIDRs
	ExpiresAt   *time.Time
	Events      []string // door keys: the events it may check in (DoorScopes only)
}

// maxKeyName bounds a key's label.
const maxKeyName = 100

// NewKey checks r and returns the key to store, its secret (shown once,
// never stored) and the secret's hash (the key's storage key). Bad input
// is a ticketing invalid_request error whose Param names the field: type,
// environment, name, scopes, origins, ips or expires_at.
func NewKey(r KeyRequest, now time.Time) (Key, string, string, error) {
	bad := func(param, format string, args ...any) (Key, string, string, error) {
		return Key{}, "", "", ticketing.Invalid(param, format, args...)
	}
	switch {
	case r.Type != Secret && r.Type != Publishable:
		return bad("type", "the key type must be sk (secret, servers) or pk (publishable, browsers)")
	case !r.Environment.Valid():
		return bad("environment", "the environment must be test or live")
	case len(r.Name) > maxKeyName:
		return bad("name", "the name is longer than %d characters", maxKeyName)
	case r.ExpiresAt != nil && !r.ExpiresAt.After(now):
		return bad("expires_at", "the expiry must be in the future")
	}
	k := Key{
		ID: NewKeyID(), OrganizerID: r.OrganizerID, Type: r.Type, Environment: r.Environment, Name: r.Name,
		Scopes: DefaultScopes(r.Type), AllowedOrigins: []string{}, AllowedIPs: []string{}, CreatedAt: now.UTC(), ExpiresAt: r.ExpiresAt,
	}
	if len(r.Scopes) > 0 {
		if err := ValidateScopes(r.Type, r.Scopes); err != nil {
			return bad("scopes", "%v", err)
		}
		k.Scopes = compactCopy(r.Scopes)
	}
	switch r.Type {
	case Publishable:
		if len(r.IPs) > 0 {
			return bad("ips", "an IP allow-list is for secret keys only; a publishable key is bound to origins")
		}
		if len(r.Origins) == 0 {
			return bad("origins", "a publishable key needs at least one origin (e.g. https://shop.example)")
		}
		for _, o := range r.Origins {
			n, err := NormalizeOrigin(o)
			if err != nil {
				return bad("origins", "%v", err)
			}
			k.AllowedOrigins = append(k.AllowedOrigins, n)
		}
	case Secret:
		if len(r.Origins) > 0 {
			return bad("origins", "origins are for publishable keys only")
		}
		for _, ip := range r.IPs {
			p, err := ParseAllowedIP(ip)
			if err != nil {
				return bad("ips", "%v", err)
			}
			k.AllowedIPs = append(k.AllowedIPs, p.String())
		}
	}
	if len(r.Events) > 0 {
		if err := doorKey(r, k.Scopes); err != nil {
			return bad("events", "%v", err)
		}
		k.Events = compactCopy(r.Events)
	}
	k.AllowedOrigins, k.AllowedIPs = compactCopy(k.AllowedOrigins), compactCopy(k.AllowedIPs)
	secret := NewSecret(r.Type, r.Environment)
	k.Last4 = secret[len(secret)-4:]
	return k, secret, Hash(secret), nil
}

// compactCopy drops repeated values, keeping the first of each in order.
func compactCopy(list []string) []string {
	out := []string{}
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// maxKeyEvents bounds the events a door key is bound to.
const maxKeyEvents = 50

// doorKey checks a key bound to events: a secret key holding check-in
// scopes only (it reads no buyer data), and plausible event ids.
func doorKey(r KeyRequest, scopes []string) error {
	if r.Type != Secret {
		return fmt.Errorf("only a secret key can be bound to events")
	}
	if len(r.Scopes) == 0 {
		return fmt.Errorf("a key bound to events needs --scopes of its own: %s", strings.Join(DoorScopes, " and/or "))
	}
	for _, s := range scopes {
		if !slices.Contains(DoorScopes, s) {
			return fmt.Errorf("a key bound to events holds check-in scopes only (%s), not %s", strings.Join(DoorScopes, ", "), s)
		}
	}
	if len(r.Events) > maxKeyEvents {
		return fmt.Errorf("a key is bound to at most %d events", maxKeyEvents)
	}
	for _, e := range r.Events {
		if !strings.HasPrefix(e, "evt_") || len(e) > 100 || strings.ContainsFunc(e, func(c rune) bool { return c <= ' ' || c == ',' || c > '~' }) {
			return fmt.Errorf("event id %q must look like evt_ followed by its id", e)
		}
	}
	return nil
}
