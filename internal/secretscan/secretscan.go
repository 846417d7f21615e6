// Package secretscan is what a secret scanning partner's report does (GitHub's
// partner protocol, docs/secret-scanning.md): verify the report's signature
// under the partner's published key, revoke each tix secret key it names,
// alert the key's owner once, and answer per token whether it was one of
// ours. It knows nothing of HTTP or storage: the published keys, the key
// store and the alerts are ports.
package secretscan

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/jsonkeys"
	"tix/internal/ticketing"
)

// Match is one token the partner found: the protocol's message item.
type Match struct {
	Token  string `json:"token"`
	Type   string `json:"type"`
	URL    string `json:"url"`
	Source string `json:"source"` // content, commit, pull_request_title, ... (where on the partner)
}

// Feedback is the answer about one token (the protocol's feedback item).
type Feedback struct {
	TokenRaw  string `json:"token_raw"`
	TokenType string `json:"token_type"`
	Label     string `json:"label"`
}

// Feedback labels.
const (
	// TruePositive: the token is a tix secret key; it is revoked.
	TruePositive = "true_positive"
	// FalsePositive: anything else (a publishable key, which is public by
	// design; a string of the right shape that is no key; garbage).
	FalsePositive = "false_positive"
)

// ErrUnknownKeyID is returned by PublicKeys when the partner's published list
// does not hold the key (never did, or retired it).
var ErrUnknownKeyID = errors.New("unknown public key identifier")

// PublicKeys finds the partner's published verification key by its identifier.
type PublicKeys interface {
	Key(ctx context.Context, id string) (*ecdsa.PublicKey, error)
}

// Keys revokes a key by the hash of its secret (auth.ErrUnknownKey when none
// has it), reporting whether this call revoked it (store.Store).
type Keys interface {
	RevokeKeyByHash(ctx context.Context, hash string, rev auth.Revocation) (*auth.Key, bool, error)
}

// Alerts tells a key's owner it leaked (email.Service); it writes the alert
// once per key, whoever asks again.
type Alerts interface {
	KeyLeaked(ctx context.Context, org, keyID, label, source string, at time.Time) (int, error)
}

// Service handles the reports of one partner.
type Service struct {
	Publisher PublicKeys
	Keys      Keys
	Alerts    Alerts // nil: email is off; the key is revoked, the alert logged as not sent
	Clock     clock.Clock
}

// Signature headers of GitHub's partner protocol.
const (
	HeaderKeyID     = "Github-Public-Key-Identifier"
	HeaderSignature = "Github-Public-Key-Signature"
)

// unauthorized is the answer to a report that does not verify: nothing changes.
func unauthorized(format string, args ...any) error {
	return ticketing.Errorf(ticketing.CodeUnauthorized, format, args...)
}

// Verify checks body's signature: base64 of an ASN.1 DER ECDSA P-256 signature
// over SHA-256 of the raw body, under the published key named keyID. A
// missing header, an unknown or retired key, or a signature that does not
// verify is a ticketing unauthorized error.
func Verify(ctx context.Context, keys PublicKeys, keyID, signature string, body []byte) error {
	if keyID == "" || signature == "" {
		return unauthorized("a report needs the %s and %s headers", HeaderKeyID, HeaderSignature)
	}
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		return unauthorized("%s is not base64", HeaderSignature)
	}
	pub, err := keys.Key(ctx, keyID)
	if errors.Is(err, ErrUnknownKeyID) {
		return unauthorized("%s names no key the reporter publishes (unknown or retired)", HeaderKeyID)
	}
	if err != nil {
		return fmt.Errorf("reporter's public key %s: %w", keyID, err)
	}
	sum := sha256.Sum256(body)
	if !ecdsa.VerifyASN1(pub, sum[:], sig) {
		return unauthorized("the report's signature does not verify under key %s", keyID)
	}
	return nil
}

// ParseReport decodes a report's body: a JSON array of matches, each with a
// token. Members the protocol may add later are ignored.
func ParseReport(body []byte) ([]Match, error) {
	var dup *jsonkeys.DuplicateError
	if err := jsonkeys.Check(body); errors.As(err, &dup) {
		return nil, ticketing.Invalid(dup.Param(), "%s; send each member once", dup)
	}
	var ms []Match
	if err := json.Unmarshal(body, &ms); err != nil || ms == nil {
		return nil, ticketing.Invalid("body", "a report is a JSON array of {token, type, url, source} objects")
	}
	for i, m := range ms {
		if m.Token == "" {
			return nil, ticketing.Invalid(fmt.Sprintf("[%d].token", i), "match %d has no token", i)
		}
	}
	return ms, nil
}

// Report verifies and applies one report, and returns the feedback per
// token, in the report's order. A report that does not verify changes
// nothing (unauthorized); one that verifies but is malformed changes nothing
// (invalid_request). Applying it again changes nothing more: revoked keys
// stay revoked with their first report's source, and each owner alert is
// written once per key.
func (s *Service) Report(ctx context.Context, keyID, signature string, body []byte) ([]Feedback, error) {
	if err := Verify(ctx, s.Publisher, keyID, signature, body); err != nil {
		return nil, err
	}
	ms, err := ParseReport(body)
	if err != nil {
		return nil, err
	}
	out := make([]Feedback, len(ms))
	for i, m := range ms {
		label, err := s.apply(ctx, m)
		if err != nil {
			return nil, err
		}
		out[i] = Feedback{TokenRaw: m.Token, TokenType: m.Type, Label: label}
	}
	return out, nil
}

// apply revokes the key of one match if it is a tix secret key. Publishable
// keys are public by design: never revoked on a report.
func (s *Service) apply(ctx context.Context, m Match) (string, error) {
	typ, _, ok := auth.ParseSecret(m.Token)
	if !ok || typ != auth.Secret {
		return FalsePositive, nil
	}
	now := s.Clock.Now()
	k, revoked, err := s.Keys.RevokeKeyByHash(ctx, auth.Hash(m.Token), auth.Revocation{At: now, Reason: auth.RevokedLeaked, Source: m.URL})
	if errors.Is(err, auth.ErrUnknownKey) {
		return FalsePositive, nil
	}
	if err != nil {
		return "", err
	}
	slog.WarnContext(ctx, "leaked key reported", "key_id", k.ID, "organizer_id", k.OrganizerID, "revoked_now", revoked,
		"revoke_reason", k.RevokeReason, "source", m.URL)
	if _, err := AlertOwner(ctx, s.Alerts, k); err != nil {
		return "", err
	}
	return TruePositive, nil
}

// AlertOwner tells the owner of a key revoked as leaked (nothing for a key
// revoked otherwise), with the source stored on the key (the first
// report's), and returns how many contacts will be told. The alert is
// written once per key, so a report sent again after an alert that failed to
// be written writes it, and one sent again after it was written writes
// nothing. alerts nil (email off) logs that the owner was not told.
func AlertOwner(ctx context.Context, alerts Alerts, k *auth.Key) (int, error) {
	if k.RevokeReason != auth.RevokedLeaked || k.RevokedAt == nil {
		return 0, nil
	}
	if alerts == nil {
		slog.WarnContext(ctx, "leaked key revoked, owner not told: email is off (TIX_MAIL_SENDER)", "key_id", k.ID)
		return 0, nil
	}
	label := fmt.Sprintf("%s_%s_...%s", k.Type, k.Environment, k.Last4)
	source := k.LeakSource
	if source == "" {
		source = "no URL reported"
	}
	n, err := alerts.KeyLeaked(ctx, k.OrganizerID, k.ID, label, source, *k.RevokedAt)
	if err != nil {
		return 0, fmt.Errorf("owner alert of leaked key %s: %w", k.ID, err)
	}
	return n, nil
}
