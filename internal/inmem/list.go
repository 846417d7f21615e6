package inmem

import (
	"context"
	"sort"
	"time"

	"tix/internal/ticketing"
)

// listKey orders the listing newest first, as the table's index does.
func listKey(created time.Time, id string) string {
	return created.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + id
}

// ListOrders pages through the organizer's orders in one environment, newest
// first. The cursor is the sort key of the last order of the previous page.
func (s *Orders) ListOrders(_ context.Context, q ticketing.OrderQuery) (*ticketing.OrderPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	byKey := map[string]storedOrder{}
	for id, st := range s.orders {
		if st.org != q.OrganizerID || st.env != string(q.Environment) || !listed(q, st) {
			continue
		}
		k := listKey(st.createdAt, id)
		keys = append(keys, k)
		byKey[k] = st
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	if q.Cursor != "" {
		i := sort.Search(len(keys), func(i int) bool { return keys[i] < q.Cursor })
		if i == 0 || keys[i-1] != q.Cursor {
			return nil, ticketing.Invalid("cursor", "cursor is not valid for this query")
		}
		keys = keys[i:]
	}
	page := &ticketing.OrderPage{}
	if len(keys) > q.Limit {
		keys = keys[:q.Limit]
		page.HasMore, page.NextCursor = true, keys[len(keys)-1]
	}
	for _, k := range keys {
		o, err := decodeOrder(byKey[k])
		if err != nil {
			return nil, err
		}
		page.Orders = append(page.Orders, o)
	}
	return page, nil
}

// listed applies the query's filters; a pending order past its expiry counts
// as cancelled. Creation bounds are inclusive at whole seconds.
func listed(q ticketing.OrderQuery, st storedOrder) bool {
	created := st.createdAt.Truncate(time.Second)
	if q.CreatedAfter != nil && created.Before(q.CreatedAfter.Truncate(time.Second)) {
		return false
	}
	if q.CreatedBefore != nil && created.After(q.CreatedBefore.Truncate(time.Second)) {
		return false
	}
	if q.EventID != "" && st.eventID != q.EventID {
		return false
	}
	overdue := st.status == ticketing.OrderPending && !st.expiresAt.After(q.Now)
	switch q.Status {
	case "":
		return true
	case ticketing.OrderPending:
		return st.status == ticketing.OrderPending && !overdue
	case ticketing.OrderCancelled:
		return st.status == ticketing.OrderCancelled || overdue
	}
	return st.status == q.Status
}
