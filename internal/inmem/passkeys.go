package inmem

import (
	"bytes"
	"context"
	"sync"

	"tix/internal/dashboard/account"
)

// Passkeys is the dashboard's passkey storage (account.Passkeys) in
// memory, with the DynamoDB store's conditions: a credential id is
// registered once, a sign-in's write wins only over the count it read.
type Passkeys struct {
	mu   sync.Mutex
	byID map[string]account.Passkey
}

var _ account.Passkeys = (*Passkeys)(nil)

// NewPasskeys returns an empty passkey store.
func NewPasskeys() *Passkeys { return &Passkeys{byID: map[string]account.Passkey{}} }

func clonePasskey(p account.Passkey) account.Passkey {
	p.UserHandle = bytes.Clone(p.UserHandle)
	p.Credential = bytes.Clone(p.Credential)
	if p.LastUsedAt != nil {
		t := *p.LastUsedAt
		p.LastUsedAt = &t
	}
	return p
}

// AddPasskey stores p unless its credential id is registered.
func (s *Passkeys) AddPasskey(_ context.Context, p account.Passkey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[p.ID]; ok {
		return account.ErrExists
	}
	s.byID[p.ID] = clonePasskey(p)
	return nil
}

// GetPasskey reads a passkey by its credential id.
func (s *Passkeys) GetPasskey(_ context.Context, id string) (*account.Passkey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.byID[id]
	if !ok {
		return nil, account.ErrNotFound
	}
	c := clonePasskey(p)
	return &c, nil
}

// ListPasskeys lists the account's passkeys, oldest first.
func (s *Passkeys) ListPasskeys(_ context.Context, email string) ([]account.Passkey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []account.Passkey{}
	for _, p := range s.byID {
		if p.Email == email {
			out = append(out, clonePasskey(p))
		}
	}
	account.SortPasskeys(out)
	return out, nil
}

// RemovePasskey deletes the account's passkey.
func (s *Passkeys) RemovePasskey(_ context.Context, email, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.byID[id]; !ok || p.Email != email {
		return account.ErrNotFound
	}
	delete(s.byID, id)
	return nil
}

// UsePasskey records a sign-in if the count is still u.PrevCount.
func (s *Passkeys) UsePasskey(_ context.Context, email, id string, u account.PasskeyUse) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.byID[id]
	if !ok || p.Email != email || p.SignCount != u.PrevCount {
		return account.ErrChanged
	}
	at := u.At.UTC()
	p.SignCount, p.BackupState, p.LastUsedAt = u.SignCount, u.BackupState, &at
	s.byID[id] = p
	return nil
}
