package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

// The waiting room form on the Events page (docs/dashboard.md, Waiting
// room): protecting an event's on-sale through the service tixctl onsale
// protect uses (waitroom.Service.ProtectEvent).

// Onsales protects on-sales and reads their protection (waitroom.Service).
type Onsales interface {
	ProtectEvent(ctx context.Context, t ticketing.Tenant, req waitroom.ProtectRequest) (*waitroom.Protection, error)
	Protection(ctx context.Context, t ticketing.Tenant, eventID string) (*waitroom.Protection, error)
}

func (s *Server) onsaleRoutes(mux *http.ServeMux, o string) {
	mux.HandleFunc("POST "+o+"/events/{id}/waiting-room", s.inOrg(account.ManageOnsales, s.protectOnsale))
}

// protectOnsale reads the form: the opening in the organizer's time zone
// (datetime-local), admissions per second and proof-of-work bits (empty: the
// defaults).
func (s *Server) protectOnsale(w http.ResponseWriter, r *http.Request, o *orgReq) {
	if s.Onsales == nil {
		s.notFound(w, r)
		return
	}
	loc := o.v.Loc
	if loc == nil {
		loc = time.UTC
	}
	req := waitroom.ProtectRequest{EventID: r.PathValue("id")}
	var bad string
	at, err := time.ParseInLocation("2006-01-02T15:04", strings.TrimSpace(r.PostFormValue("opens_at")), loc)
	if err != nil {
		bad = "onsale.bad_opens"
	}
	req.OpensAt = at
	for _, f := range []struct {
		name string
		v    *int
	}{{"rate", &req.Rate}, {"difficulty", &req.Difficulty}} {
		if v := strings.TrimSpace(r.PostFormValue(f.name)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				bad = "onsale.bad_number"
			}
			*f.v = n
		}
	}
	show := func(msg string, status int) { o.v.Error = msg; s.showEvents(w, r, o, eventsData{}, status) }
	if bad != "" {
		show(o.v.T(bad), http.StatusBadRequest)
		return
	}
	p, err := s.Onsales.ProtectEvent(r.Context(), ticketing.Tenant{OrganizerID: o.org(), Environment: o.env()}, req)
	if err != nil {
		s.serviceError(w, r, err, show)
		return
	}
	s.did(r, o, "onsale.protect", p.EventID, fmt.Sprintf("opens %s, %d/s, %d bits", p.OpensAt.Format(time.RFC3339), p.Rate, p.Difficulty))
	o.v.Message = "onsale.protected"
	s.showEvents(w, r, o, eventsData{}, http.StatusOK)
}

// protectionOf is the event's waiting room for the page (nil: none, or no
// Onsales wired).
func (s *Server) protectionOf(ctx context.Context, o *orgReq, eventID string) *waitroom.Protection {
	if s.Onsales == nil {
		return nil
	}
	p, err := s.Onsales.Protection(ctx, ticketing.Tenant{OrganizerID: o.org(), Environment: o.env()}, eventID)
	if err != nil {
		return nil
	}
	return p
}
