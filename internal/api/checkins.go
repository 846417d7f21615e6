package api

import (
	"context"
	"maps"
	"net/http"
	"slices"

	"tix/internal/auth"
	"tix/internal/ticketcode"
	"tix/internal/ticketing"
)

// The door (docs/door.md): the organizer's ticket keys, check-ins and their undo.

// TicketKeys is what the API needs of the ticket signing keys
// (ticketing.TicketKeys).
type TicketKeys interface {
	KeySet(ctx context.Context, t ticketing.Tenant) (*ticketcode.KeySet, error)
	TicketCodes(ctx context.Context, o *ticketing.Order) (string, map[string]string, error)
}

// EnableDoor serves the door's routes (docs/door.md) over keys and in (nil
// answers 404 there). Only the functions that serve the door call it
// (app.EnableDoor): the others link none of its handlers, and the catalog
// function's bootstrap has no room for them.
func (s *Server) EnableDoor(keys TicketKeys, in CheckIns) {
	s.TicketKeys, s.CheckIns = keys, in
	s.doorRoutes = []*route{
		{method: "GET", pattern: "/ticket-keys", group: GroupCheckins, handle: s.ticketKeys},
		{method: "POST", pattern: "/check-ins/batch", group: GroupCheckins, scope: auth.ScopeCheckinsWrite, skOnly: true, bucket: bucketWrite, handle: s.checkInBatch},
		{method: "POST", pattern: "/check-ins", group: GroupCheckins, scope: auth.ScopeCheckinsWrite, skOnly: true, bucket: bucketWrite, handle: s.checkIn},
		{method: "DELETE", pattern: "/check-ins/{id}", group: GroupCheckins, scope: auth.ScopeCheckinsUndo, skOnly: true, bucket: bucketWrite, handle: s.undoCheckIn},
		// Below /events, but the checkins function's (a route of its own at the gateway).
		{method: "GET", pattern: "/events/{id}/check-in-stats", group: GroupCheckins, scope: auth.ScopeCheckinsWrite, skOnly: true,
			query: []string{"occurrence_id"}, handle: s.checkInStats},
		{method: "GET", pattern: "/events/{id}/admission-list", group: GroupCheckins, scope: auth.ScopeCheckinsWrite, skOnly: true,
			query: []string{"occurrence_id", "limit", "cursor"}, handle: s.admissionList},
	}
}

// CheckIns is what the API needs of the door (ticketing.CheckIns).
type CheckIns interface {
	Scan(ctx context.Context, t ticketing.Tenant, sc ticketing.Scan) (*ticketing.ScanResult, error)
	Undo(ctx context.Context, t ticketing.Tenant, id string) (*ticketing.CheckIn, error)
	Stats(ctx context.Context, t ticketing.Tenant, eventID, occurrenceID string, keyEvents []string) (*ticketing.CheckInStats, error)
	AdmissionList(ctx context.Context, t ticketing.Tenant, q ticketing.AdmissionQuery) (*ticketcode.AdmissionPage, error)
	Batch(ctx context.Context, t ticketing.Tenant, b ticketing.ScanBatch) ([]ticketing.ScanResult, error)
}

func (s *Server) ticketKeys(w http.ResponseWriter, r *http.Request) error {
	if s.TicketKeys == nil {
		return ticketing.NotFound("ticket keys")
	}
	ks, err := s.TicketKeys.KeySet(r.Context(), callerOf(r.Context()).tenant())
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, ks.JWKSet(s.Clock.Now()))
	return nil
}

type checkInJSON struct {
	ID           string `json:"id"`
	TicketNumber string `json:"ticket_number"`
	Gate         string `json:"gate"`
	At           string `json:"at"`
}

type scanJSON struct {
	Result       string          `json:"result"`
	TicketNumber *string         `json:"ticket_number"`
	Seat         *ticketSeatJSON `json:"seat"`
	CheckIn      *checkInJSON    `json:"check_in"`
	Tickets      []scanJSON      `json:"tickets,omitempty"`
}

func renderCheckIn(ci *ticketing.CheckIn) *checkInJSON {
	if ci == nil {
		return nil
	}
	return &checkInJSON{ID: ci.ID, TicketNumber: ci.TicketNumber, Gate: ci.Gate, At: ts(ci.At)}
}

func renderScan(res *ticketing.ScanResult) scanJSON {
	out := scanJSON{Result: res.Result, TicketNumber: strPtr(res.TicketNumber), Seat: renderTicketSeat(res.Seat), CheckIn: renderCheckIn(res.CheckIn)}
	for i := range res.Tickets {
		out.Tickets = append(out.Tickets, renderScan(&res.Tickets[i]))
	}
	return out
}

func (s *Server) checkIn(w http.ResponseWriter, r *http.Request) error {
	if s.CheckIns == nil {
		return ticketing.NotFound("check-ins")
	}
	var req struct {
		Code         string `json:"code"`
		Gate         string `json:"gate"`
		EventID      string `json:"event_id"`
		OccurrenceID string `json:"occurrence_id"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	ik, err := idempotencyKey(r, false)
	if err != nil {
		return err
	}
	c := callerOf(r.Context())
	res, err := s.CheckIns.Scan(r.Context(), c.tenant(), ticketing.Scan{Code: req.Code, Gate: req.Gate, EventID: req.EventID,
		OccurrenceID: req.OccurrenceID, Events: c.key.Events, KeyID: c.key.ID, IdempotencyKey: ik})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, renderScan(res))
	return nil
}

func (s *Server) undoCheckIn(w http.ResponseWriter, r *http.Request) error {
	if s.CheckIns == nil {
		return ticketing.NotFound("check-in")
	}
	ci, err := s.CheckIns.Undo(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Undone  bool         `json:"undone"`
		CheckIn *checkInJSON `json:"check_in"`
	}{true, renderCheckIn(ci)})
	return nil
}

type gateCountJSON struct {
	Gate     string `json:"gate"`
	Admitted int    `json:"admitted"`
}

type checkInStatsJSON struct {
	EventID      string          `json:"event_id"`
	OccurrenceID *string         `json:"occurrence_id"`
	Sold         int             `json:"sold"`
	Admitted     int             `json:"admitted"`
	Refunded     int             `json:"refunded"`
	Gates        []gateCountJSON `json:"gates"`
}

func (s *Server) checkInStats(w http.ResponseWriter, r *http.Request) error {
	if s.CheckIns == nil {
		return ticketing.NotFound("event")
	}
	c := callerOf(r.Context())
	occ := r.URL.Query().Get("occurrence_id")
	st, err := s.CheckIns.Stats(r.Context(), c.tenant(), r.PathValue("id"), occ, c.key.Events)
	if err != nil {
		return err
	}
	out := checkInStatsJSON{EventID: st.EventID, OccurrenceID: strPtr(occ), Sold: st.Sold, Admitted: st.Admitted, Refunded: st.Refunded,
		Gates: []gateCountJSON{}}
	for _, g := range slices.Sorted(maps.Keys(st.Gates)) {
		out.Gates = append(out.Gates, gateCountJSON{Gate: g, Admitted: st.Gates[g]})
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}
