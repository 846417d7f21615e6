package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strconv"
)

// gzipAbove is the body size from which a seating map is sent gzip-encoded
// to a client that accepts it: a 50,000-seat map is about 7 MB of JSON, over
// Lambda's 6 MB response limit, and about a tenth of that compressed.
const gzipAbove = 8 << 10

// writeJSONCompressed is writeJSON for large bodies: gzip-encoded when the
// client accepts gzip and the body is at least gzipAbove bytes (Vary:
// Accept-Encoding either way).
func writeJSONCompressed(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil || len(body) < gzipAbove {
		writeJSON(w, status, v)
		return
	}
	h := w.Header()
	h.Set("Vary", "Accept-Encoding")
	body = append(body, '\n')
	if acceptsGzip(r) {
		var buf bytes.Buffer
		buf.Grow(len(body) / 8)
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
