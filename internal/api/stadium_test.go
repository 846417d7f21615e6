package api_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/catalogimport"
	"tix/internal/demo"
)

// The demo stadium's seating map (50,000 seats) is one request, gzip-encoded
// for a client that accepts it and then well under Lambda's 6 MB response
// limit; a client that does not accept gzip gets 422 unsupported saying so
// (the plain map is read here with the limit lifted, to compare), and reads
// it one zone at a time. The test logs the sizes and the p50 of the reads
// (docs/measurements.md, The stadium's seating map):
// go test -run TestStadiumSeatingMap -v ./internal/api
func TestStadiumSeatingMap(t *testing.T) {
	h := newHarness(t)
	file := demo.Catalog(t0)
	for _, e := range file.Events {
		if e.Ref == demo.RefStadium {
			file.Events = []catalogimport.ImportEvent{e}
		}
	}
	events, err := catalogimport.BuildCatalog(orgA, file, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.st.Catalog.ImportCatalog(t.Context(), orgA, events); err != nil {
		t.Fatal(err)
	}
	sk, _ := h.key(orgA, auth.Secret)
	read := func(gz bool, query ...string) (*http.Response, []byte, time.Duration) {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/v1/events/"+events[0].ID+"/seating"+strings.Join(query, ""), nil)
		req.Header.Set("Authorization", "Bearer "+sk)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip, br")
		}
		rec := httptest.NewRecorder()
		start := time.Now()
		h.handler.ServeHTTP(rec, req)
		took := time.Since(start)
		if rec.Code != http.StatusOK && rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("status %d: %.300s", rec.Code, rec.Body)
		}
		return rec.Result(), rec.Body.Bytes(), took
	}
	res, refused, cold := read(false)
	if res.StatusCode != http.StatusUnprocessableEntity || !bytes.Contains(refused, []byte(`"code":"unsupported"`)) || !bytes.Contains(refused, []byte("Accept-Encoding: gzip")) {
		t.Fatalf("without Accept-Encoding: status %d, %.300s; want 422 unsupported naming Accept-Encoding: gzip", res.StatusCode, refused)
	}
	h.srv.Limits.ResponseBytes = 1 << 30 // a server that is not behind Lambda could send it
	res, raw, _ := read(false)
	h.srv.Limits.ResponseBytes = 0
	if res.Header.Get("Content-Encoding") != "" || res.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("without Accept-Encoding: Content-Encoding %q, Vary %q", res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
	}
	var lat []time.Duration
	var packed []byte
	for range 4 {
		res, b, took := read(true)
		if res.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Content-Encoding %q, want gzip", res.Header.Get("Content-Encoding"))
		}
		packed = b
		lat = append(lat, took)
	}
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		t.Fatal(err)
	}
	unpacked, _ := io.ReadAll(zr)
	if !bytes.Equal(unpacked, raw) {
		t.Fatal("the gzip body is not the plain body")
	}
	var m struct {
		Zones []struct {
			Seats []json.RawMessage `json:"seats"`
		} `json:"zones"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	seats := 0
	for _, z := range m.Zones {
		seats += len(z.Seats)
	}
	if seats != demo.StadiumSeats {
		t.Fatalf("%d seats on the map, want %d", seats, demo.StadiumSeats)
	}
	if len(packed) >= 6<<20 {
		t.Fatalf("compressed map %d bytes: over Lambda's 6 MB response limit", len(packed))
	}
	t.Logf("stadium seating map: %d seats, %d bytes raw, %d bytes gzip; read p50 %s (gzip, %d reads of the kept map); first read (reads the map; refused: no gzip) %s",
		seats, len(raw), len(packed), percentile(lat, 0.5).Round(time.Millisecond), len(lat), cold.Round(time.Millisecond))
	var zlat []time.Duration
	for _, z := range events[0].Seating.Zones {
		res, b, took := read(false, "?zone_id="+z.ID)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "" {
			t.Fatalf("zone %s without gzip: status %d, Content-Encoding %q", z.ID, res.StatusCode, res.Header.Get("Content-Encoding"))
		}
		_, gz, _ := read(true, "?zone_id="+z.ID)
		zlat = append(zlat, took)
		t.Logf("zone %s: %d seats, %d bytes raw, %d bytes gzip, read %s", z.Name, len(z.Seats), len(b), len(gz), took.Round(time.Millisecond))
	}
	t.Logf("zone reads (no gzip): p50 %s", percentile(zlat, 0.5).Round(time.Millisecond))
}
