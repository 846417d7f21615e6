package scanner

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"tix/internal/clock"
	"tix/internal/jsonkeys"
	"tix/internal/ticketcode"
	"tix/internal/ticketing"
)

// The page's same-origin JSON endpoints. Each needs the session cookie and
// its CSRF token in the X-Tix-Scanner-Csrf header (a header a page of
// another site cannot send without a preflight this server never allows).

// apiError is the contract's error envelope.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Param   string `json:"param,omitempty"`
	} `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, code, msg, param string) {
	var e apiError
	e.Error.Code, e.Error.Message, e.Error.Param = code, msg, param
	writeJSON(w, status, e)
}

// api runs h for a signed-in scanner whose request carries the session's CSRF token.
func (s *Server) api(h func(http.ResponseWriter, *http.Request, *door) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, err := s.current(r)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		if d == nil {
			fail(w, http.StatusUnauthorized, "unauthorized", "The scanner is signed out (its session ended or its key was revoked): sign in again with a check-in key.", "")
			return
		}
		if got := r.Header.Get(csrfHeader); subtle.ConstantTimeCompare([]byte(got), []byte(d.csrf)) != 1 {
			fail(w, http.StatusForbidden, "forbidden", "Missing or wrong "+csrfHeader+" header: reload the scanner page.", "")
			return
		}
		err = h(w, r, d)
		var te *ticketing.Error
		switch {
		case err == nil:
		case errors.As(err, &te) && te.Code == ticketing.CodeInvalidRequest:
			fail(w, http.StatusBadRequest, string(te.Code), te.Message, te.Param)
		case errors.As(err, &te) && te.Code == ticketing.CodeNotFound:
			fail(w, http.StatusNotFound, string(te.Code), te.Message, te.Param)
		default:
			s.internal(w, r, err)
		}
	}
}

// decode reads a JSON body, refusing duplicate member names.
func decode(r *http.Request, v any) error {
	var raw json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		return ticketing.Invalid("body", "The body must be one JSON object.")
	}
	if err := jsonkeys.Check(raw); err != nil {
		return ticketing.Invalid("body", "%s", err.Error())
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return ticketing.Invalid("body", "The body must be one JSON object of the documented members.")
	}
	return nil
}

// scanJSON is an answer as the page shows it.
type scanJSON struct {
	Result       string                       `json:"result"`
	TicketNumber string                       `json:"ticket_number,omitempty"`
	Seat         *ticketcode.Seat             `json:"seat"`
	CheckIn      *ticketcode.AdmissionCheckIn `json:"check_in"`
	Tickets      []scanJSON                   `json:"tickets,omitempty"`
}

func renderScan(res *ticketing.ScanResult) scanJSON {
	out := scanJSON{Result: res.Result, TicketNumber: res.TicketNumber}
	if st := res.Seat; st != nil {
		code := st.SeatID
		out.Seat = &ticketcode.Seat{Label: st.Label, ZoneName: st.ZoneName, Row: st.Row, Number: st.Number, SeatCode: &code}
	}
	if ci := res.CheckIn; ci != nil {
		out.CheckIn = &ticketcode.AdmissionCheckIn{ID: ci.ID, TicketNumber: ci.TicketNumber, Gate: ci.Gate, At: clock.Format(ci.At)}
	}
	for i := range res.Tickets {
		out.Tickets = append(out.Tickets, renderScan(&res.Tickets[i]))
	}
	return out
}

// scan admits one scanned code (POST /v1/check-ins's rules: the same service).
func (s *Server) scan(w http.ResponseWriter, r *http.Request, d *door) error {
	var req struct {
		Code           string `json:"code"`
		Gate           string `json:"gate"`
		EventID        string `json:"event_id"`
		OccurrenceID   string `json:"occurrence_id"`
		IdempotencyKey string `json:"idempotency_key"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.IdempotencyKey) > 255 || strings.ContainsFunc(req.IdempotencyKey, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
		return ticketing.Invalid("idempotency_key", "idempotency_key is 1 to 255 printable ASCII characters")
	}
	res, err := s.CheckIns.Scan(r.Context(), d.tenant(), ticketing.Scan{Code: req.Code, Gate: req.Gate, EventID: req.EventID,
		OccurrenceID: req.OccurrenceID, Events: d.key.Events, KeyID: d.key.ID, IdempotencyKey: req.IdempotencyKey})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderScan(res))
	return nil
}

// ticketKeys answers the organizer's JWK set, as GET /v1/ticket-keys.
func (s *Server) ticketKeys(w http.ResponseWriter, r *http.Request, d *door) error {
	ks, err := s.TicketKeys.KeySet(r.Context(), d.tenant())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ks.JWKSet(s.Clock.Now()))
	return nil
}
