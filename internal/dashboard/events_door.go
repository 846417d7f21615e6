package dashboard

import (
	"context"
	"maps"
	"slices"

	"tix/internal/ticketing"
)

// The Events page's door counts (docs/dashboard.md, Events): each listed
// event's tickets sold, admitted and refunded, and admitted per gate, as
// GET /v1/events/{id}/check-in-stats answers them.

// DoorCounts counts an event's door (store.Tickets, as the API's
// check-in stats read it).
type DoorCounts interface {
	CheckInStats(ctx context.Context, t ticketing.Tenant, eventID, occurrenceID string) (*ticketing.CheckInStats, error)
}

// doorRow is one event's door counts.
type doorRow struct {
	Sold, Admitted, Refunded int
	Gates                    []gateRow
}

type gateRow struct {
	Gate     string
	Admitted int
}

// doorCounts are the door counts of an event of o (nil when the page has
// no DoorCounts, or the event sold nothing).
func (s *Server) doorCounts(ctx context.Context, o *orgReq, eventID string) (*doorRow, error) {
	if s.Door == nil {
		return nil, nil
	}
	st, err := s.Door.CheckInStats(ctx, ticketing.Tenant{OrganizerID: o.org(), Environment: o.env()}, eventID, "")
	if err != nil || st.Sold+st.Refunded == 0 {
		return nil, err
	}
	row := &doorRow{Sold: st.Sold, Admitted: st.Admitted, Refunded: st.Refunded}
	for _, g := range slices.Sorted(maps.Keys(st.Gates)) {
		row.Gates = append(row.Gates, gateRow{Gate: g, Admitted: st.Gates[g]})
	}
	return row, nil
}
