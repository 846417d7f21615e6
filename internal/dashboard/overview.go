package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
)

// The Overview page: today's sales per event in the organizer's time zone,
// and the live chart of orders per minute (static/overview.js, uPlot,
// polling chartPath). docs/dashboard.md, Overview.

// Sales reads the sales tally the order transactions keep (internal/store:
// ticketing.TallyShards counter items per quarter hour; no order is read).
type Sales interface {
	SalesTally(ctx context.Context, org string, env ticketing.Environment, from time.Time) (*ticketing.Tally, error)
	TierRevenue(ctx context.Context, org string, env ticketing.Environment) (ticketing.TierRevenue, error)
}

// UPlotVersion is the uplot package embedded as static/uplot.iife.min.js
// and static/uplot.min.css, pinned in scripts/package.json (a test compares
// them byte for byte).
const UPlotVersion = "1.6.32"

// chartWindow is how far back the chart reaches.
const chartWindow = time.Hour

func (s *Server) overviewRoutes(mux *http.ServeMux, o string) {
	mux.HandleFunc("GET "+o+"/{$}", s.inOrg(account.SeeOverview, s.overview))
	mux.HandleFunc("GET "+o+"/overview/orders.json", s.inOrg(account.SeeOverview, s.ordersPerMinute))
}

// todayRow is one event sold today: units and revenue today, and its sales
// against capacity over all time (from its stock counters).
type todayRow struct {
	Event             *ticketing.Event
	Units             int
	Revenue           int64
	Sold, Capacity    int
	Available, OnHold int
}

type overviewData struct {
	Since    time.Time // the start of today in the organizer's time zone
	Rows     []todayRow
	Units    int
	Revenue  map[string]int64 // per currency
	Chart    string           // the chart's JSON path
	Zone     string
	LastHour ticketing.MinuteCount // totals of the chart's window
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request, o *orgReq) {
	ctx := r.Context()
	now := s.Clock.Now()
	since := ticketing.DayStart(now, o.v.Loc)
	tally, err := s.Sales.SalesTally(ctx, o.org(), o.env(), now.Add(-chartWindow))
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d := overviewData{Since: since, Revenue: map[string]int64{}, Chart: o.v.OrgPath("/overview/orders.json"), Zone: o.v.Loc.String()}
	for _, m := range tally.Series(now.Add(-chartWindow), now) {
		d.LastHour.Created += m.Created
		d.LastHour.Paid += m.Paid
	}
	today, err := s.Sales.SalesTally(ctx, o.org(), o.env(), since)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	for _, id := range slices.Sorted(maps.Keys(today.Events)) {
		row, err := s.todayRow(ctx, o, id, today.Events[id], now)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		d.Rows = append(d.Rows, row)
		d.Units += row.Units
		d.Revenue[row.Event.Currency] += row.Revenue
	}
	o.v.Data = d
	s.render(w, r, http.StatusOK, "overview", o.v)
}

func (s *Server) todayRow(ctx context.Context, o *orgReq, eventID string, sales ticketing.EventSales, now time.Time) (todayRow, error) {
	e, err := s.Catalog.GetCatalogEvent(ctx, o.org(), eventID)
	if err != nil {
		return todayRow{}, fmt.Errorf("event %s sold today: %w", eventID, err)
	}
	stock, err := s.Catalog.GetStock(ctx, e.ID, o.env(), "")
	if err != nil {
		return todayRow{}, err
	}
	row := todayRow{Event: e, Units: sales.Units, Revenue: sales.Revenue}
	for _, t := range tierCounts(e, stock, nil, now) {
		row.Sold += t.Sold
		row.Capacity += t.Capacity
		row.Available += t.Available
		row.OnHold += t.Held
	}
	return row, nil
}

// chartData is the chart's JSON: minute starts (Unix seconds) and the
// orders created and paid in each, oldest first.
type chartData struct {
	T       []int64 `json:"t"`
	Created []int   `json:"created"`
	Paid    []int   `json:"paid"`
}

func (s *Server) ordersPerMinute(w http.ResponseWriter, r *http.Request, o *orgReq) {
	now := s.Clock.Now()
	from := now.Add(-chartWindow)
	tally, err := s.Sales.SalesTally(r.Context(), o.org(), o.env(), from)
	if err != nil && r.Context().Err() != nil {
		return // the page was closed while it polled
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d := chartData{T: []int64{}, Created: []int{}, Paid: []int{}}
	for _, m := range tally.Series(from, now) {
		d.T = append(d.T, m.At.Unix())
		d.Created = append(d.Created, m.Created)
		d.Paid = append(d.Paid, m.Paid)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(d)
}

// Money shows minor units of a currency: 250000 RUB is "2 500.00 RUB".
func (v *view) Money(minor int64, currency string) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	whole := fmt.Sprint(minor / 100)
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteRune('\u00a0')
		}
		b.WriteRune(c)
	}
	return fmt.Sprintf("%s%s.%02d %s", sign, b.String(), minor%100, currency)
}
