package dashboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"tix/internal/catalogimport"
	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

// The Events page: the organizer's events with each tier's availability
// and sales, and the upload of a catalog import file (the format and the
// code of tixctl catalog import: catalogimport.ParseCatalog, then the
// store's ImportCatalog). docs/dashboard.md, Events.

// Catalog is the catalog's storage, as the API and tixctl use it (internal/store).
type Catalog interface {
	ListEvents(ctx context.Context, q ticketing.EventQuery) (*ticketing.EventPage, error)
	GetCatalogEvent(ctx context.Context, organizerID, eventID string) (*ticketing.Event, error)
	GetStock(ctx context.Context, eventID string, env ticketing.Environment, occurrenceID string) (*ticketing.Stock, error)
	ImportCatalog(ctx context.Context, organizerID string, events []*ticketing.Event) error
}

// maxCatalogUpload bounds an uploaded catalog file (a 20,000-seat map is
// about 2 MB; a Lambda request carries at most 6 MB).
const maxCatalogUpload = 5 << 20

// eventsPerPage is how many events the Events page lists at once.
const eventsPerPage = 20

func (s *Server) eventsRoutes(mux *http.ServeMux, o string) {
	mux.HandleFunc("GET "+o+"/events", s.inOrg(account.ReadEvents, s.eventsPage))
	mux.HandleFunc("POST "+o+"/catalog", s.inOrg(account.ImportCatalog, s.importCatalog))
}

// tierRow is one tier's stock and sales in the page's environment: sold
// (paid and pending orders), held (seats in live holds), available.
type tierRow struct {
	Tier                            ticketing.Tier
	Capacity, Sold, Held, Available int
	Revenue                         int64 // paid at ticket prices, less refunds
	Currency                        string
}

type eventRow struct {
	Event *ticketing.Event
	Tiers []tierRow
	Door  *doorRow             // sold, admitted, refunded, per gate (events_door.go)
	Queue *waitroom.Protection // the on-sale's waiting room (onsale.go)
}

type eventsData struct {
	Events   []eventRow
	Next     string // the next page's cursor
	Problems []problemRow
	Imported []*ticketing.Event
	File     string // the uploaded file's name
}

func (s *Server) eventsPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	s.showEvents(w, r, o, eventsData{}, http.StatusOK)
}

func (s *Server) showEvents(w http.ResponseWriter, r *http.Request, o *orgReq, d eventsData, status int) {
	ctx := r.Context()
	now := s.Clock.Now()
	page, err := s.Catalog.ListEvents(ctx, ticketing.EventQuery{OrganizerID: o.org(), Environment: o.env(), Limit: eventsPerPage,
		Cursor: r.URL.Query().Get("cursor"), Scope: ticketing.ScopeAll, Sort: ticketing.SortStartAt, Now: now})
	if ticketing.IsCode(err, ticketing.CodeInvalidRequest) { // a cursor from elsewhere: the first page
		page, err = s.Catalog.ListEvents(ctx, ticketing.EventQuery{OrganizerID: o.org(), Environment: o.env(), Limit: eventsPerPage,
			Scope: ticketing.ScopeAll, Sort: ticketing.SortStartAt, Now: now})
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	revenue, err := s.Sales.TierRevenue(ctx, o.org(), o.env())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	for _, le := range page.Events {
		stock, err := s.Catalog.GetStock(ctx, le.Event.ID, o.env(), "")
		if err != nil {
			s.internal(w, r, err)
			return
		}
		door, err := s.doorCounts(ctx, o, le.Event.ID)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		d.Events = append(d.Events, eventRow{Event: le.Event, Tiers: tierCounts(le.Event, stock, revenue[le.Event.ID], now), Door: door,
			Queue: s.protectionOf(ctx, o, le.Event.ID)})
	}
	if page.HasMore {
		d.Next = page.NextCursor
	}
	o.v.Data = d
	s.render(w, r, status, "events", o.v)
}

// tierCounts counts each tier of e over all its occurrences, as the API's
// availability does (ticketing.Stock.TierCount).
func tierCounts(e *ticketing.Event, stock *ticketing.Stock, revenue map[string]int64, now time.Time) []tierRow {
	rows := make([]tierRow, 0, len(e.Tiers))
	for i := range e.Tiers {
		t := &e.Tiers[i]
		c := stock.TierCount(e, t, "", now)
		rows = append(rows, tierRow{Tier: *t, Capacity: c.Total, Sold: c.Sold, Held: max(c.Total-c.Sold-c.Available, 0),
			Available: c.Available, Revenue: revenue[t.ID], Currency: e.Currency})
	}
	return rows
}

// importCatalog validates and imports an uploaded catalog file exactly as
// tixctl catalog import does; its problems are shown beside the file's
// lines they concern, and nothing is written while there is one.
func (s *Server) importCatalog(w http.ResponseWriter, r *http.Request, o *orgReq) {
	data, name, err := catalogUpload(r)
	if err != nil {
		o.v.Message = "events.no_file"
		if errors.Is(err, errTooLarge) {
			o.v.Message = "events.too_large"
		}
		s.showEvents(w, r, o, eventsData{}, http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	events, err := catalogimport.ParseCatalog(o.org(), data, s.Clock.Now())
	if err == nil {
		err = s.Catalog.ImportCatalog(ctx, o.org(), events)
	}
	if list := catalogimport.ImportProblems(err); list != nil {
		o.v.Message = "events.invalid"
		s.showEvents(w, r, o, eventsData{Problems: problemRows(data, list), File: name}, http.StatusBadRequest)
		return
	}
	if err != nil {
		s.serviceError(w, r, err, func(msg string, status int) { o.v.Error = msg; s.showEvents(w, r, o, eventsData{File: name}, status) })
		return
	}
	s.did(r, o, "catalog.import", name, fmt.Sprintf("%d events", len(events)))
	o.v.Message = "events.imported"
	s.showEvents(w, r, o, eventsData{Imported: events, File: name}, http.StatusOK)
}

var errTooLarge = errors.New("catalog file too large")

// catalogUpload reads the form's file (multipart field "file").
func catalogUpload(r *http.Request) ([]byte, string, error) {
	f, h, err := r.FormFile("file")
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, "", errTooLarge
		}
		return nil, "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCatalogUpload+1))
	if err != nil {
		return nil, "", err
	}
	if len(data) > maxCatalogUpload {
		return nil, "", errTooLarge
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, "", errors.New("empty file")
	}
	return data, h.Filename, nil
}

// problemRow is one problem of an import file beside its line.
type problemRow struct {
	Line   int    // 0: the file as a whole
	Source string // the line's text
	Anchor bool   // the line's first problem: the row is #line-<Line>
	catalogimport.ImportError
}

// problemRows places each problem on a line of the file: the line the
// decoder gave, else where its path (or the nearest enclosing one) starts.
func problemRows(data []byte, list catalogimport.ImportErrors) []problemRow {
	lines := strings.Split(string(data), "\n")
	where := jsonPathLines(data)
	rows := make([]problemRow, 0, len(list))
	anchored := map[int]bool{}
	for _, p := range list {
		n := p.Line
		for path := p.Path; n == 0 && path != ""; path = parentPath(path) {
			n = where[path]
		}
		row := problemRow{Line: n, Anchor: n > 0 && !anchored[n], ImportError: p}
		anchored[n] = true
		if n > 0 && n <= len(lines) {
			row.Source = strings.TrimRight(lines[n-1], "\r")
			if len(row.Source) > 200 {
				row.Source = row.Source[:200] + "…"
			}
		}
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b problemRow) int { return a.Line - b.Line })
	return rows
}

// parentPath is the path one level up: events[2].tiers[0] -> events[2].tiers -> events[2].
func parentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i > 0 {
		return p[:i]
	}
	return ""
}
