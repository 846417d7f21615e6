package ticketing

import (
	"context"
	"slices"

	"tix/internal/clock"
	"tix/internal/ticketcode"
)

// Limits of an admission list's page (GET /v1/events/{id}/admission-list).
const (
	MaxAdmissionPage     = 1000
	DefaultAdmissionPage = 500
)

// AdmissionQuery asks for one page of an event's admission list.
type AdmissionQuery struct {
	EventID      string
	OccurrenceID string   // "" : every occurrence
	KeyEvents    []string // the key's events (empty: every event)
	Limit        int      // 0 : DefaultAdmissionPage
	Cursor       string
}

// AdmissionList is one signed page of every ticket of an event and its
// state, so a door decides offline (docs/door.md#the-admission-list).
func (s *CheckIns) AdmissionList(ctx context.Context, t Tenant, q AdmissionQuery) (*ticketcode.AdmissionPage, error) {
	if q.Limit == 0 {
		q.Limit = DefaultAdmissionPage
	}
	if q.Limit < 1 || q.Limit > MaxAdmissionPage {
		return nil, Invalid("limit", "limit must be 1 to %d", MaxAdmissionPage)
	}
	if err := s.ownEvent(ctx, t, q.EventID, q.OccurrenceID, q.KeyEvents); err != nil {
		return nil, err
	}
	generated := s.Clock.Now()
	tickets, next, err := s.Store.AdmissionTickets(ctx, t, q.EventID, q.OccurrenceID, q.Limit, q.Cursor)
	if err != nil {
		return nil, err
	}
	p := &ticketcode.AdmissionPage{Object: "admission_list", EventID: q.EventID, OccurrenceID: optional(q.OccurrenceID),
		Livemode: t.Environment == EnvLive, GeneratedAt: clock.Format(generated), Data: make([]ticketcode.AdmissionEntry, 0, len(tickets)),
		HasMore: next != "", NextCursor: optional(next)}
	for _, st := range tickets {
		p.Data = append(p.Data, admissionEntry(st))
	}
	if err := s.Keys.SignAdmissionPage(ctx, t, p); err != nil {
		return nil, err
	}
	return p, nil
}

// ownEvent checks that the event (and occurrence) is the tenant's and the
// key's: another is not found, as another organizer's.
func (s *CheckIns) ownEvent(ctx context.Context, t Tenant, eventID, occurrenceID string, keyEvents []string) error {
	if len(keyEvents) > 0 && !slices.Contains(keyEvents, eventID) {
		return NotFound("event")
	}
	e, err := s.Catalog.GetEvent(ctx, t.OrganizerID, eventID, t.Environment)
	if err != nil {
		return err
	}
	if occurrenceID != "" && !slices.ContainsFunc(e.Occurrences, func(o Occurrence) bool { return o.ID == occurrenceID }) {
		return &Error{Code: CodeNotFound, Message: "no occurrence " + occurrenceID + " of event " + eventID, Param: "occurrence_id"}
	}
	return nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// admissionEntry is a ticket's line of the list.
func admissionEntry(st TicketState) ticketcode.AdmissionEntry {
	e := ticketcode.AdmissionEntry{TicketNumber: st.Number, OrderID: st.OrderID, OrderTicketNumber: optional(st.OrderNumber),
		OccurrenceID: optional(st.OccurrenceID), State: ticketcode.StateValid}
	if st.Seat != nil {
		e.Seat = &ticketcode.Seat{Label: st.Seat.Label, ZoneName: st.Seat.ZoneName, Row: st.Seat.Row, Number: st.Seat.Number,
			SeatCode: optional(st.Seat.SeatID)}
	}
	switch {
	case st.TransferredTo != "":
		e.State = ticketcode.StateTransferred
	case st.RefundID != "":
		e.State = ticketcode.StateRefunded
	case st.CheckIn != nil:
		e.State = ticketcode.StateAdmitted
		e.CheckIn = &ticketcode.AdmissionCheckIn{ID: st.CheckIn.ID, TicketNumber: st.CheckIn.TicketNumber, Gate: st.CheckIn.Gate,
			At: clock.Format(st.CheckIn.At)}
	}
	return e
}
