package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"tix/internal/auth"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

// The waiting room (docs/waiting-room.md): publishable-key routes to join an
// on-sale's queue and read one's place, the hosted queue page
// (waitroom_page.go), and the admission check of holds and orders.

// WaitingRoom is what the API needs of the waiting room (waitroom.Service).
type WaitingRoom interface {
	Protection(ctx context.Context, t ticketing.Tenant, eventID string) (*waitroom.Protection, error)
	NewChallenge(ctx context.Context, t ticketing.Tenant, eventID string) (*waitroom.Challenge, error)
	Join(ctx context.Context, t ticketing.Tenant, eventID, challenge, nonce, ip string) (*waitroom.Joined, error)
	QueueStatus(ctx context.Context, t ticketing.Tenant, eventID, token, ip string) (*waitroom.Status, error)
	Admit(ctx context.Context, t ticketing.Tenant, eventID, occ, token, ip, claim string) (*waitroom.Admission, error)
	Unspend(ctx context.Context, a *waitroom.Admission, claim string) error
}

// QueueLookups finds the event of an order that names none: its seats'
// hold's (Holds), or its tier's (Tiers).
type QueueLookups struct {
	Holds interface {
		GetHold(ctx context.Context, id string) (*ticketing.Hold, error)
	}
	Tiers interface {
		TierEvent(ctx context.Context, tierID string) (organizerID, eventID string, err error)
	}
}

// admissionHeader carries the admission on holds and orders.
const admissionHeader = "Tix-Admission"

// EnableWaitingRoom serves the queue's routes over w (the holds group) and
// checks the admissions of publishable-key holds and orders.
func (s *Server) EnableWaitingRoom(w WaitingRoom, lk QueueLookups) {
	s.Waitroom, s.queueLookups = w, lk
	// validates: the routes never charge the key's ceiling (the proof of
	// work is the queue's cost); each client network's budget still applies.
	s.queueRoutes = []*route{
		{method: "GET", pattern: "/queue/{event_id}/challenge", group: GroupHolds, scope: auth.ScopeHoldsWrite, validates: true, ownOrigin: true, handle: s.queueChallenge},
		{method: "POST", pattern: "/queue/{event_id}/join", group: GroupHolds, scope: auth.ScopeHoldsWrite, validates: true, ownOrigin: true, handle: s.queueJoin},
		{method: "GET", pattern: "/queue/{event_id}/status", group: GroupHolds, scope: auth.ScopeHoldsWrite, validates: true, ownOrigin: true,
			query: []string{"token"}, handle: s.queueStatus},
		// The hosted page: no key in the header, the publishable key in the query.
		{method: "GET", pattern: "/queue/{event_id}", group: GroupHolds, public: true, query: []string{"pk", "origin", "return", "lang"}, handle: s.queuePage},
	}
}

func (s *Server) queueChallenge(w http.ResponseWriter, r *http.Request) error {
	ch, err := s.Waitroom.NewChallenge(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("event_id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"challenge": ch.Token, "difficulty": ch.Difficulty, "expires_at": ts(ch.ExpiresAt),
		"algorithm": "sha256-leading-zero-bits"})
	return nil
}

func (s *Server) queueJoin(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Challenge *string `json:"challenge"`
		Nonce     *string `json:"nonce"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Challenge == nil || *req.Challenge == "" {
		return ticketing.Invalid("challenge", "challenge is required: the challenge of GET /v1/queue/{event_id}/challenge")
	}
	if req.Nonce == nil {
		return ticketing.Invalid("nonce", "nonce is required: decimal digits such that SHA-256(challenge + nonce) starts with difficulty zero bits")
	}
	j, err := s.Waitroom.Join(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("event_id"), *req.Challenge, *req.Nonce, clientIP(r))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{"token": j.Token, "joined_at": ts(j.JoinedAt), "before_opening": j.BeforeOpening, "opens_at": ts(j.OpensAt)})
	return nil
}

type queueAdmissionJSON struct {
	Token     string `json:"token"`
	ValidFrom string `json:"valid_from"`
	ExpiresAt string `json:"expires_at"`
}

type queueStatusJSON struct {
	State           string              `json:"state"`
	Position        int                 `json:"position"`
	AdmittedThrough int                 `json:"admitted_through"`
	EstimatedWait   int                 `json:"estimated_wait_seconds"`
	OpensAt         string              `json:"opens_at"`
	Rate            int                 `json:"rate"`
	PollAfter       int                 `json:"poll_after_seconds"`
	Admission       *queueAdmissionJSON `json:"admission"`
}

func (s *Server) queueStatus(w http.ResponseWriter, r *http.Request) error {
	tok := r.URL.Query().Get("token")
	if tok == "" {
		return ticketing.Invalid("token", "token is required: the queue token POST /v1/queue/{event_id}/join gave")
	}
	st, err := s.Waitroom.QueueStatus(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("event_id"), tok, clientIP(r))
	if err != nil {
		return err
	}
	out := queueStatusJSON{State: st.State, Position: st.Position, AdmittedThrough: st.AdmittedThrough,
		EstimatedWait: int(st.EstimatedWait.Seconds() + 0.999), OpensAt: ts(st.OpensAt), Rate: st.Rate, PollAfter: int(st.PollAfter.Seconds())}
	if a := st.Admission; a != nil {
		out.Admission = &queueAdmissionJSON{Token: a.Token, ValidFrom: ts(a.ValidFrom), ExpiresAt: ts(a.ExpiresAt)}
	}
	// The answer holds until just before the next useful poll: a browser's
	// cache answers repeats sooner than that.
	w.Header().Set("Cache-Control", "private, max-age="+strconv.Itoa(max(min(out.PollAfter, 5)-1, 1)))
	writeJSON(w, http.StatusOK, out)
	return nil
}

// admitted checks the admission of a publishable-key hold (claim "") or
// order (claim: its idempotency key, which spends it) of eventID (nil when
// the caller is a secret key or the occurrence has no waiting room).
func (s *Server) admitted(r *http.Request, eventID, occ, claim string) (*waitroom.Admission, error) {
	c := callerOf(r.Context())
	if s.Waitroom == nil || c == nil || c.key.Type != auth.Publishable || eventID == "" {
		return nil, nil
	}
	return s.Waitroom.Admit(r.Context(), c.tenant(), eventID, occ, r.Header.Get(admissionHeader), clientIP(r), claim)
}

// orderEvent is the event (and occurrence) an order is for: named, or its
// tier's, or its seats' hold's ("" when none is found: the order is refused
// for that anyway).
func (s *Server) orderEvent(ctx context.Context, org string, req ticketing.OrderRequest) (string, string, error) {
	occ := deref(req.OccurrenceID)
	if req.EventID != nil {
		return *req.EventID, occ, nil
	}
	tier := ""
	switch {
	case req.TierID != nil:
		tier = *req.TierID
	case req.StandingItems != nil && len(*req.StandingItems) > 0 && (*req.StandingItems)[0].TierID != nil:
		tier = *(*req.StandingItems)[0].TierID
	case req.SeatReservationIDs != nil && len(*req.SeatReservationIDs) > 0:
		hid, ok := ticketing.HoldIDOfReservation((*req.SeatReservationIDs)[0])
		if !ok {
			return "", "", nil
		}
		h, err := s.queueLookups.Holds.GetHold(ctx, hid)
		if err != nil || h.OrganizerID != org {
			return "", "", ignoreNotFound(err)
		}
		return h.EventID, h.OccurrenceID, nil
	}
	if tier == "" {
		return "", "", nil
	}
	o, ev, err := s.queueLookups.Tiers.TierEvent(ctx, tier)
	if err != nil || o != org {
		return "", "", ignoreNotFound(err)
	}
	return ev, occ, nil
}

func ignoreNotFound(err error) error {
	if errors.Is(err, ticketing.ErrNotFound) {
		return nil
	}
	return err
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// orderAdmission checks and spends the admission of a publishable-key order
// (idempotency key key); done gives the spend back when the order was refused.
func (s *Server) orderAdmission(r *http.Request, key string, req ticketing.OrderRequest) (done func(error), err error) {
	done = func(error) {}
	c := callerOf(r.Context())
	if s.Waitroom == nil || c == nil || c.key.Type != auth.Publishable {
		return done, nil
	}
	ev, occ, err := s.orderEvent(r.Context(), c.key.OrganizerID, req)
	if err != nil {
		return done, err
	}
	a, err := s.admitted(r, ev, occ, key)
	if err != nil || a == nil {
		return done, err
	}
	return func(err error) {
		var e *ticketing.Error
		if errors.As(err, &e) && statusOf[e.Code] < 500 {
			_ = s.Waitroom.Unspend(context.WithoutCancel(r.Context()), a, key)
		}
	}, nil
}

// ownOrigin reports whether r comes from a page of the API's own origin (the
// hosted queue page): its Origin names the host it was sent to, or a
// same-origin GET, which browsers send without Origin, says so in
// Sec-Fetch-Site (a header no page script can set).
func (s *Server) ownOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	if pub, err := url.Parse(s.PublicURL); err == nil && s.PublicURL != "" && pub.Scheme == u.Scheme && pub.Host == u.Host {
		return true
	}
	return u.Host == r.Host
}
