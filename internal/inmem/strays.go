package inmem

import (
	"context"
	"sort"
	"strings"

	"tix/internal/ticketing"
)

// PutStray records p with its check's marker unless its payment is recorded.
func (s *Strays) PutStray(_ context.Context, p *ticketing.StrayPayment) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.strays == nil {
		s.strays = map[string]ticketing.StrayPayment{}
	}
	k := p.OrderID + "#" + p.PaymentID
	if _, ok := s.strays[k]; ok {
		return false, nil
	}
	p.Version++
	s.strays[k] = *p
	if t, ok := p.CheckTimer(); ok {
		s.due[dueKey(t)] = t
	}
	return true, nil
}

// SaveStray rewrites p at its Version with the markers moved.
func (s *Strays) SaveStray(_ context.Context, p *ticketing.StrayPayment, put, done []ticketing.Timer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := p.OrderID + "#" + p.PaymentID
	if cur, ok := s.strays[k]; !ok || cur.Version != p.Version {
		return ticketing.ErrStateChanged
	}
	p.Version++
	s.strays[k] = *p
	for _, t := range done {
		delete(s.due, dueKey(t))
	}
	for _, t := range put {
		s.due[dueKey(t)] = t
	}
	return nil
}

// OrderStrays lists an order's stray payments.
func (s *Strays) OrderStrays(_ context.Context, orderID string) ([]ticketing.StrayPayment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ticketing.StrayPayment
	for k, p := range s.strays {
		if strings.HasPrefix(k, orderID+"#") {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PaymentID < out[j].PaymentID })
	return out, nil
}

// ListStrays lists every stray payment, newest first.
func (s *Strays) ListStrays(_ context.Context) ([]ticketing.StrayPayment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ticketing.StrayPayment, 0, len(s.strays))
	for _, p := range s.strays {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DetectedAt.After(out[j].DetectedAt) })
	return out, nil
}
