package inmem

import (
	"context"
	"sort"

	"tix/internal/ticketing"
)

var _ ticketing.OrderFinder = (*Orders)(nil)

// OrdersByBuyer is the tenant's orders of one buyer email, newest first, as
// the table's buyer index answers.
func (s *Orders) OrdersByBuyer(_ context.Context, t ticketing.Tenant, email string, limit int) ([]*ticketing.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ticketing.BuyerKey(t.OrganizerID, t.Environment, email)
	var keys []string
	byKey := map[string]storedOrder{}
	for id, st := range s.orders {
		if st.buyer == key {
			k := listKey(st.createdAt, id)
			keys = append(keys, k)
			byKey[k] = st
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	out := make([]*ticketing.Order, 0, len(keys))
	for _, k := range keys {
		o, err := decodeOrder(byKey[k])
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// TicketOrder is the order holding a ticket number in env.
func (s *Orders) TicketOrder(_ context.Context, env ticketing.Environment, number string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.tickets[string(env)+"#"+number]; ok {
		return id, nil
	}
	return "", ticketing.NotFound("ticket " + number)
}
