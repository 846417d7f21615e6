package scanner

import (
	"net/http"
	"time"

	"tix/internal/ticketing"
)

// The offline door's endpoints: the event's signed admission list, passed on
// as GET /v1/events/{id}/admission-list answers it (the page checks its
// signature), and the upload of the scans made offline, as POST
// /v1/check-ins/batch (docs/door.md, "Offline doors").

func (s *Server) admissionList(w http.ResponseWriter, r *http.Request, d *door) error {
	q := r.URL.Query()
	p, err := s.CheckIns.AdmissionList(r.Context(), d.tenant(), ticketing.AdmissionQuery{EventID: q.Get("event_id"),
		OccurrenceID: q.Get("occurrence_id"), KeyEvents: d.key.Events, Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

type batchAnswerJSON struct {
	ClientScanID string `json:"client_scan_id"`
	scanJSON
}

func (s *Server) batch(w http.ResponseWriter, r *http.Request, d *door) error {
	var req struct {
		Gate         string `json:"gate"`
		EventID      string `json:"event_id"`
		OccurrenceID string `json:"occurrence_id"`
		Scans        []struct {
			ClientScanID string    `json:"client_scan_id"`
			Code         string    `json:"code"`
			ScannedAt    time.Time `json:"scanned_at"`
			Gate         string    `json:"gate"`
		} `json:"scans"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	b := ticketing.ScanBatch{Gate: req.Gate, EventID: req.EventID, OccurrenceID: req.OccurrenceID, Events: d.key.Events, KeyID: d.key.ID,
		Scans: make([]ticketing.OfflineScan, len(req.Scans))}
	for i, sc := range req.Scans {
		b.Scans[i] = ticketing.OfflineScan{ClientScanID: sc.ClientScanID, Code: sc.Code, ScannedAt: sc.ScannedAt, Gate: sc.Gate}
	}
	res, err := s.CheckIns.Batch(r.Context(), d.tenant(), b)
	if err != nil {
		return err
	}
	data := make([]batchAnswerJSON, len(res)) // in the upload's order, as the API answers
	for i := range res {
		data[i] = batchAnswerJSON{ClientScanID: b.Scans[i].ClientScanID, scanJSON: renderScan(&res[i])}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "check_in_batch", "data": data})
	return nil
}
