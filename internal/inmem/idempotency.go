package inmem

import (
	"context"
	"time"

	"tix/internal/ticketing"
)

func idemKey(t ticketing.Tenant, scope, key string) string {
	return t.OrganizerID + "#" + string(t.Environment) + "#" + scope + "#" + key
}

// GetIdempotency reads an Idempotency-Key record.
func (s *Idempotency) GetIdempotency(_ context.Context, t ticketing.Tenant, scope, key string) (*ticketing.Idempotency, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.idem[idemKey(t, scope, key)]
	if !ok {
		return nil, ticketing.NotFound("idempotency key")
	}
	return &rec, nil
}

// BeginIdempotency binds the key unless a record exists (then ErrIdempotencyTaken
// with the existing record).
func (s *Idempotency) BeginIdempotency(_ context.Context, rec *ticketing.Idempotency, _ time.Time) (*ticketing.Idempotency, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := idemKey(rec.Tenant, rec.Scope, rec.Key)
	if old, ok := s.idem[k]; ok {
		return &old, ticketing.ErrIdempotencyTaken
	}
	s.idem[k] = *rec
	return rec, nil
}

// ClaimIdempotency moves the lease from oldLease to rec's.
func (s *Idempotency) ClaimIdempotency(_ context.Context, rec *ticketing.Idempotency, oldLease string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := idemKey(rec.Tenant, rec.Scope, rec.Key)
	cur, ok := s.idem[k]
	if !ok || cur.Lease != oldLease {
		return ticketing.ErrLeaseLost
	}
	cur.Lease, cur.LeaseUntil = rec.Lease, rec.LeaseUntil
	s.idem[k] = cur
	return nil
}

// ReleaseIdempotency deletes a record while rec's lease holds it.
func (s *Idempotency) ReleaseIdempotency(_ context.Context, rec *ticketing.Idempotency) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := idemKey(rec.Tenant, rec.Scope, rec.Key)
	if cur, ok := s.idem[k]; ok && cur.Lease == rec.Lease {
		delete(s.idem, k)
	}
	return nil
}
