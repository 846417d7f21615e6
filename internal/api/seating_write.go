package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"tix/internal/ticketing"
)

// gzipAbove is the body size from which a seating map is sent gzip-encoded
// to a client that accepts it: a 50,000-seat map is about 8.5 MB of JSON, over
// Lambda's 6 MB response limit, and about a tenth of that compressed.
const gzipAbove = 8 << 10

// writeSeating writes a seating map: gzip-encoded when the client accepts
// gzip and the body is at least gzipAbove bytes (Vary: Accept-Encoding
// either way), and refused with 422 unsupported, saying how to read it
// instead, when the response would not fit in what the function may return
// (Limits.ResponseBytes, as lambdaPayloadBytes counts it).
func (s *Server) writeSeating(w http.ResponseWriter, r *http.Request, m seatingJSON, zoneID string) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	body = append(body, '\n')
	h := w.Header()
	out, packed := body, false
	if len(body) >= gzipAbove {
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			out, packed = gzipped(body), true
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	if n, limit := lambdaPayloadBytes(h, http.StatusOK, out), s.responseMax(); n > limit {
		fits := false // would the gzip-encoded response fit?
		if !packed && len(body) >= gzipAbove {
			gz := gzipped(body)
			h.Set("Content-Encoding", "gzip")
			h.Set("Content-Length", strconv.Itoa(len(gz)))
			fits = lambdaPayloadBytes(h, http.StatusOK, gz) <= limit
		}
		h.Del("Content-Encoding")
		return seatingTooLarge(m, seatingSize{json: len(body), payload: n, limit: limit, packed: packed}, zoneID, fits)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return nil
}

func gzipped(body []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(body) / 8)
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = zw.Write(body)
	_ = zw.Close()
	return buf.Bytes()
}

// responseMax is the most bytes a response may take as the function's
// payload (Limits.ResponseBytes, by default LambdaResponseMax).
func (s *Server) responseMax() int {
	if s.Limits.ResponseBytes > 0 {
		return s.Limits.ResponseBytes
	}
	return LambdaResponseMax
}

// seatingTooLarge says how to read a map too large for one response: with
// gzip when that fits (param Accept-Encoding), else one zone at a time
// (param zone_id), naming the zones.
func seatingTooLarge(m seatingJSON, size seatingSize, zoneID string, gzipFits bool) error {
	what := "This seating map"
	if zoneID != "" {
		what = "This zone of the seating map"
	}
	how := ""
	if size.packed {
		how = " gzip-encoded"
	}
	msg := fmt.Sprintf("%s is %d bytes of JSON and%s %d bytes as the API's Lambda payload, over the %d bytes one response can carry.",
		what, size.json, how, size.payload, size.limit)
	var e *ticketing.Error
	switch {
	case gzipFits && zoneID != "":
		e = ticketing.Errorf(ticketing.CodeUnsupported, "%s Send Accept-Encoding: gzip (it then fits).", msg)
		e.Param = "Accept-Encoding"
	case gzipFits:
		e = ticketing.Errorf(ticketing.CodeUnsupported, "%s Send Accept-Encoding: gzip (it then fits), or read one zone at a time with zone_id (%s).", msg, zoneList(m))
		e.Param = "Accept-Encoding"
	case zoneID == "" && len(m.Zones) > 1:
		e = ticketing.Errorf(ticketing.CodeUnsupported, "%s Read it one zone at a time with zone_id (%s), with Accept-Encoding: gzip.", msg, zoneList(m))
		e.Param = "zone_id"
	default:
		e = ticketing.Errorf(ticketing.CodeUnsupported, "%s It cannot be read through the API even with Accept-Encoding: gzip; the organizer must split it into smaller zones.", msg)
	}
	return e
}

// seatingSize is a refused map's size: its JSON, the Lambda payload it made
// (gzip-encoded or not) and the limit.
type seatingSize struct {
	json, payload, limit int
	packed               bool
}

// zoneList names a map's zones for a message: the first 20 ids.
func zoneList(m seatingJSON) string {
	ids := make([]string, 0, min(len(m.Zones), 20))
	for _, z := range m.Zones[:min(len(m.Zones), 20)] {
		ids = append(ids, z.ID)
	}
	list := "zones: " + strings.Join(ids, ", ")
	if len(m.Zones) > 20 {
		list += fmt.Sprintf(" and %d more; GET /events/{id}/availability lists them all", len(m.Zones)-20)
	}
	return list
}
