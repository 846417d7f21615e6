package inmem

import (
	"context"
	"fmt"
	"sync"
	"time"

	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

// WaitingRoom is the waiting room's store in memory, with the DynamoDB
// store's conditions. Touched counts the requests to each item (its key as
// the DynamoDB store names it), so tests can show that no item is shared.
type WaitingRoom struct {
	mu          sync.Mutex
	protections map[string]waitroom.Protection
	answers     map[string]bool
	joins       map[string]int // "<event>#<shard>#<bucket>"
	claims      map[string]string
	Touched     map[string]int
}

// NewWaitingRoom returns an empty store.
func NewWaitingRoom() *WaitingRoom {
	return &WaitingRoom{protections: map[string]waitroom.Protection{}, answers: map[string]bool{}, joins: map[string]int{},
		claims: map[string]string{}, Touched: map[string]int{}}
}

func (s *WaitingRoom) touch(key string) { s.Touched[key]++ }

// PutProtection implements waitroom.Store.
func (s *WaitingRoom) PutProtection(_ context.Context, p waitroom.Protection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch("EVT#" + p.EventID + "/QUEUE")
	if cur, ok := s.protections[p.EventID]; ok && cur.OrganizerID != p.OrganizerID {
		return ticketing.ErrStateChanged
	}
	s.protections[p.EventID] = p
	return nil
}

// GetProtection implements waitroom.Store.
func (s *WaitingRoom) GetProtection(_ context.Context, eventID string) (*waitroom.Protection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch("EVT#" + eventID + "/QUEUE")
	p, ok := s.protections[eventID]
	if !ok {
		return nil, ticketing.ErrNotFound
	}
	return &p, nil
}

// RecordAnswer implements waitroom.Store.
func (s *WaitingRoom) RecordAnswer(_ context.Context, id string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch("QANS#" + id)
	if s.answers[id] {
		return waitroom.ErrAnswerUsed
	}
	s.answers[id] = true
	return nil
}

// CountJoin implements waitroom.Store.
func (s *WaitingRoom) CountJoin(_ context.Context, eventID string, shard, bucket int, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := fmt.Sprintf("%s#%d#%d", eventID, shard, bucket)
	s.touch("QJOIN#" + k)
	s.joins[k]++
	return nil
}

// JoinCounts implements waitroom.Store.
func (s *WaitingRoom) JoinCounts(_ context.Context, eventID string, shards, from, to int) (map[int]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]int{}
	for sh := 0; sh < shards; sh++ {
		for b := from; b <= to; b++ {
			k := fmt.Sprintf("%s#%d#%d", eventID, sh, b)
			s.touch("QJOIN#" + k)
			if n := s.joins[k]; n > 0 {
				out[b] += n
			}
		}
	}
	return out, nil
}

// ClaimAdmission implements waitroom.Store.
func (s *WaitingRoom) ClaimAdmission(_ context.Context, id, claim string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch("QADM#" + id)
	if cur, ok := s.claims[id]; ok && cur != claim {
		return waitroom.ErrAdmissionSpent
	}
	s.claims[id] = claim
	return nil
}

// ReleaseAdmission implements waitroom.Store.
func (s *WaitingRoom) ReleaseAdmission(_ context.Context, id, claim string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch("QADM#" + id)
	if s.claims[id] == claim {
		delete(s.claims, id)
	}
	return nil
}

// AdmissionSpent implements waitroom.Store.
func (s *WaitingRoom) AdmissionSpent(_ context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch("QADM#" + id)
	_, ok := s.claims[id]
	return ok, nil
}
