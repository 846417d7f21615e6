package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"tix/internal/ticketing"
)

// Offline doors (docs/door.md#offline-doors): the signed admission list and
// the upload of scans made offline.

func (s *Server) admissionList(w http.ResponseWriter, r *http.Request) error {
	if s.CheckIns == nil {
		return ticketing.NotFound("event")
	}
	q := queryOf(r)
	limit := 0
	if q.has("limit") {
		n, err := strconv.Atoi(q.str("limit"))
		if err != nil || n < 1 || n > ticketing.MaxAdmissionPage {
			return ticketing.Invalid("limit", "limit must be an integer from 1 to %d (got %q)", ticketing.MaxAdmissionPage, q.str("limit"))
		}
		limit = n
	}
	c := callerOf(r.Context())
	p, err := s.CheckIns.AdmissionList(r.Context(), c.tenant(), ticketing.AdmissionQuery{EventID: r.PathValue("id"),
		OccurrenceID: q.str("occurrence_id"), KeyEvents: c.key.Events, Limit: limit, Cursor: q.str("cursor")})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, p)
	return nil
}

type batchScanJSON struct {
	ClientScanID string `json:"client_scan_id"`
	Code         string `json:"code"`
	ScannedAt    string `json:"scanned_at"`
	Gate         string `json:"gate"`
}

type batchAnswerJSON struct {
	ClientScanID string            `json:"client_scan_id,omitempty"`
	Result       string            `json:"result"`
	TicketNumber *string           `json:"ticket_number"`
	Seat         *ticketSeatJSON   `json:"seat"`
	CheckIn      *checkInJSON      `json:"check_in"`
	Superseded   *checkInJSON      `json:"superseded"`
	Tickets      []batchAnswerJSON `json:"tickets,omitempty"`
}

func renderBatchAnswer(id string, res *ticketing.ScanResult) batchAnswerJSON {
	out := batchAnswerJSON{ClientScanID: id, Result: res.Result, TicketNumber: strPtr(res.TicketNumber), Seat: renderTicketSeat(res.Seat),
		CheckIn: renderCheckIn(res.CheckIn), Superseded: renderCheckIn(res.Superseded)}
	for i := range res.Tickets {
		out.Tickets = append(out.Tickets, renderBatchAnswer("", &res.Tickets[i]))
	}
	return out
}

func (s *Server) checkInBatch(w http.ResponseWriter, r *http.Request) error {
	if s.CheckIns == nil {
		return ticketing.NotFound("check-ins")
	}
	var req struct {
		Gate         string          `json:"gate"`
		EventID      string          `json:"event_id"`
		OccurrenceID *string         `json:"occurrence_id"`
		Scans        []batchScanJSON `json:"scans"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	c := callerOf(r.Context())
	b := ticketing.ScanBatch{Gate: req.Gate, EventID: req.EventID, Events: c.key.Events, KeyID: c.key.ID,
		Scans: make([]ticketing.OfflineScan, len(req.Scans))}
	if req.OccurrenceID != nil {
		b.OccurrenceID = *req.OccurrenceID
	}
	for i, sc := range req.Scans {
		at, err := time.Parse(time.RFC3339Nano, sc.ScannedAt)
		if err != nil && len(req.Scans) <= ticketing.MaxBatchScans {
			return ticketing.Invalid(fmt.Sprintf("scans[%d].scanned_at", i), "scanned_at must be an RFC 3339 date-time such as 2026-12-31T19:02:11Z (got %q)", sc.ScannedAt)
		}
		b.Scans[i] = ticketing.OfflineScan{ClientScanID: sc.ClientScanID, Code: sc.Code, ScannedAt: at, Gate: sc.Gate}
	}
	res, err := s.CheckIns.Batch(r.Context(), c.tenant(), b)
	if err != nil {
		return err
	}
	out := struct {
		Object string            `json:"object"`
		Data   []batchAnswerJSON `json:"data"`
	}{"check_in_batch", make([]batchAnswerJSON, len(res))}
	for i := range res {
		out.Data[i] = renderBatchAnswer(b.Scans[i].ClientScanID, &res[i])
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}
