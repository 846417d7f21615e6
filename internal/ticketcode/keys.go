package ticketcode

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// Key is one signing key of an organizer in one environment: its id, its
// public half, its private half sealed at rest (opaque here: the owner of
// the key set seals and opens it), and when it stopped signing and stops
// verifying.
type Key struct {
	Kid       string    `json:"kid"`
	X         string    `json:"x"` // the public key, unpadded base64url (RFC 8037)
	Sealed    string    `json:"sealed"`
	CreatedAt time.Time `json:"created_at"`
	// RetiredAt is when a newer key took over the signing; VerifyUntil is
	// the end of the overlap during which codes it signed still verify.
	RetiredAt   *time.Time `json:"retired_at,omitempty"`
	VerifyUntil *time.Time `json:"verify_until,omitempty"`
}

// Public is the key's public half (nil when X is malformed).
func (k Key) Public() ed25519.PublicKey {
	b, err := base64.RawURLEncoding.DecodeString(k.X)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil
	}
	return ed25519.PublicKey(b)
}

// Verifies reports whether codes signed by k verify at now: it signs, or
// it retired and its overlap has not ended.
func (k Key) Verifies(now time.Time) bool {
	return k.VerifyUntil == nil || now.Before(*k.VerifyUntil)
}

// KeySet is every key of an organizer in one environment, the signing one
// first. Version is the stored revision (every write is conditional on it).
type KeySet struct {
	OrganizerID string `json:"organizer_id"`
	Environment string `json:"environment"`
	Keys        []Key  `json:"keys"`
	Version     int64  `json:"-"`
}

// Signing is the key that signs new codes: the first, unless none is left
// that has not retired.
func (ks *KeySet) Signing() (Key, bool) {
	if len(ks.Keys) == 0 || ks.Keys[0].RetiredAt != nil {
		return Key{}, false
	}
	return ks.Keys[0], true
}

// Verifier is the public key kid names, when it still verifies at now.
func (ks *KeySet) Verifier(kid string, now time.Time) (ed25519.PublicKey, bool) {
	for _, k := range ks.Keys {
		if k.Kid == kid && k.Verifies(now) {
			pub := k.Public()
			return pub, pub != nil
		}
	}
	return nil, false
}

// Rotate makes next the signing key at now: the current one retires and
// keeps verifying for overlap.
func (ks *KeySet) Rotate(next Key, now time.Time, overlap time.Duration) {
	until := now.Add(overlap)
	for i := range ks.Keys {
		if ks.Keys[i].RetiredAt == nil {
			ks.Keys[i].RetiredAt = &now
			ks.Keys[i].VerifyUntil = &until
		}
	}
	ks.Keys = append([]Key{next}, ks.Keys...)
}

// NewKey makes a fresh Ed25519 key: its public entry (Sealed left for the
// caller to fill) and its private half.
func NewKey(now time.Time) (Key, ed25519.PrivateKey) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader) // crypto/rand never fails
	var id [8]byte
	_, _ = rand.Read(id[:])
	return Key{Kid: "tk_" + hex.EncodeToString(id[:]), X: base64.RawURLEncoding.EncodeToString(pub), CreatedAt: now.UTC()}, priv
}

// JWK is a public key as RFC 8037 writes an Ed25519 one, with the end of a
// retired key's overlap (verify_until, RFC 3339; absent for the signing
// key), after which a scanner refuses its codes.
type JWK struct {
	Kty         string  `json:"kty"`
	Crv         string  `json:"crv"`
	Kid         string  `json:"kid"`
	X           string  `json:"x"`
	Use         string  `json:"use"`
	Alg         string  `json:"alg"`
	VerifyUntil *string `json:"verify_until,omitempty"`
}

// JWKS is GET /v1/ticket-keys: the keys that verify at now.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWKSet lists the keys of ks that verify at now, the signing one first.
func (ks *KeySet) JWKSet(now time.Time) JWKS {
	out := JWKS{Keys: []JWK{}}
	for _, k := range ks.Keys {
		if !k.Verifies(now) || k.Public() == nil {
			continue
		}
		j := JWK{Kty: "OKP", Crv: "Ed25519", Kid: k.Kid, X: k.X, Use: "sig", Alg: "EdDSA"}
		if k.VerifyUntil != nil {
			s := k.VerifyUntil.UTC().Format(time.RFC3339)
			j.VerifyUntil = &s
		}
		out.Keys = append(out.Keys, j)
	}
	return out
}

// FromJWKS is the key set a scanner holds after GET /v1/ticket-keys: what
// Verify needs offline (no private halves).
func FromJWKS(set JWKS) KeySet {
	var ks KeySet
	for _, j := range set.Keys {
		if j.Kty != "OKP" || j.Crv != "Ed25519" {
			continue
		}
		k := Key{Kid: j.Kid, X: j.X}
		if j.VerifyUntil != nil {
			t, err := time.Parse(time.RFC3339, *j.VerifyUntil)
			if err != nil {
				continue
			}
			k.VerifyUntil = &t
		}
		ks.Keys = append(ks.Keys, k)
	}
	return ks
}
