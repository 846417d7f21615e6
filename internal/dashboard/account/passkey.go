package account

import (
	"context"
	"errors"
	"sort"
	"time"
)

// Passkey is a WebAuthn credential a user signs in with (docs/dashboard.md,
// Passkeys). The store finds it by its credential id (a sign-in names only
// that) and lists it by its owner's email.
type Passkey struct {
	ID         string `json:"id"` // the credential id, base64url without padding
	Email      string `json:"email"`
	Name       string `json:"name"`        // the owner's label for it ("Laptop")
	UserHandle []byte `json:"user_handle"` // the account's WebAuthn user.id, random, the same for all its passkeys
	// Credential is the credential record as the WebAuthn library encodes
	// it (public key, attestation, flags): opaque here.
	Credential []byte `json:"credential"`
	// SignCount and BackupState change at each sign-in (UsePasskey); they
	// override the values inside Credential.
	SignCount   uint32     `json:"sign_count"`
	BackupState bool       `json:"backup_state"`
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at,omitempty"`
}

// PasskeyUse is what one sign-in changes on a passkey.
type PasskeyUse struct {
	PrevCount   uint32 // the sign count the ceremony was checked against
	SignCount   uint32 // the authenticator's new count
	BackupState bool
	At          time.Time
}

// ErrChanged: the passkey's sign count is no longer the one a sign-in was
// checked against (another sign-in with it came first), or it was removed.
var ErrChanged = errors.New("changed meanwhile")

// MaxPasskeys is how many passkeys one account may have.
const MaxPasskeys = 20

// Passkeys is the passkeys' storage; internal/store implements it on the
// single table, internal/inmem in memory.
type Passkeys interface {
	// AddPasskey stores a new passkey; ErrExists when its credential id is
	// registered already (to any account).
	AddPasskey(ctx context.Context, p Passkey) error
	// GetPasskey reads a passkey by its credential id.
	GetPasskey(ctx context.Context, id string) (*Passkey, error)
	// ListPasskeys lists an account's passkeys, oldest first.
	ListPasskeys(ctx context.Context, email string) ([]Passkey, error)
	// RemovePasskey deletes the account's passkey; ErrNotFound when the
	// account has no passkey with that id.
	RemovePasskey(ctx context.Context, email, id string) error
	// UsePasskey records a sign-in with a conditional write: ErrChanged
	// unless the stored sign count is still u.PrevCount.
	UsePasskey(ctx context.Context, email, id string, u PasskeyUse) error
}

// SortPasskeys orders passkeys oldest first (then by id).
func SortPasskeys(ps []Passkey) {
	sort.Slice(ps, func(i, j int) bool {
		if !ps[i].CreatedAt.Equal(ps[j].CreatedAt) {
			return ps[i].CreatedAt.Before(ps[j].CreatedAt)
		}
		return ps[i].ID < ps[j].ID
	})
}
