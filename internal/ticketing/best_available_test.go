package ticketing_test

import (
	"context"
	"strings"
	"testing"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

const bestEvent = "evt_best"

// bestDomain is the domain with a SectionEvent: Stalls (sort order 1, 3 rows
// of 30) ranks before Balcony (sort order 2, listed first, 2 rows of 30).
func bestDomain(t *testing.T) *domain {
	t.Helper()
	d := newDomain(t)
	e := ticketingtest.SectionEvent(d.now, bestEvent, 0,
		ticketingtest.Section{ID: "bal", Name: "Balcony", SortOrder: 2, Rows: 2, PerRow: 30},
		ticketingtest.Section{ID: "st", Name: "Stalls", SortOrder: 1, Rows: 3, PerRow: 30})
	if err := d.st.Catalog.PutEvent(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return d
}

func bestReq(tier string, qty int) ticketing.HoldRequest {
	return ticketing.HoldRequest{EventID: ptr(bestEvent), BestAvailable: &ticketing.BestAvailable{TierID: &tier, Quantity: &qty}}
}

// adjacentInRow reports whether a hold's seats are next to each other in one row.
func adjacentInRow(h *ticketing.Hold) bool {
	for i, s := range h.Seats {
		if *s.Row != *h.Seats[0].Row || s.ZoneName != h.Seats[0].ZoneName || (i > 0 && *s.Number != *h.Seats[i-1].Number+1) {
			return false
		}
	}
	return true
}

// Best available takes seats next to each other in the best zone's first
// row, near its middle (one of the best 8 such runs), then its next rows;
// holds one after another never share a seat.
func TestBestAvailable_AdjacentSeatsInTheBestRow(t *testing.T) {
	d := bestDomain(t)
	ctx := context.Background()
	seen := map[string]bool{}
	for i := range 6 {
		h, err := d.sales.Holds.CreateHold(ctx, d.c, "", bestReq(ticketingtest.SectionTier, 3))
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Seats) != 3 || !adjacentInRow(h) || h.TotalBasePrice != 3*250000 {
			t.Fatalf("hold %d: %+v, want 3 adjacent seats", i, h.Seats)
		}
		first := h.Seats[0]
		if first.ZoneName != "Stalls" || *first.Row == "R03" || (i == 0 && (*first.Row != "R01" || *first.Number < 3 || *first.Number > 26)) {
			t.Fatalf("hold %d: %s, want Stalls' first row near its middle (then its first rows)", i, first.Label)
		}
		for _, s := range h.Seats {
			if seen[s.SeatID] {
				t.Fatalf("seat %s held twice", s.SeatID)
			}
			seen[s.SeatID] = true
		}
	}
}

// When no row has the quantity together, best available takes the best
// free seats one by one; when fewer are free, it answers seat_conflict.
func TestBestAvailable_ScatteredAndNotEnough(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	e := ticketingtest.SectionEvent(d.now, bestEvent, 0, ticketingtest.Section{ID: "st", Name: "Stalls", SortOrder: 1, Rows: 1, PerRow: 6})
	if err := d.st.Catalog.PutEvent(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := d.sales.Holds.CreateHold(ctx, d.c, "", ticketing.HoldRequest{EventID: ptr(bestEvent), SeatIDs: []string{"st_R01_2", "st_R01_4"}}); err != nil {
		t.Fatal(err)
	}
	h, err := d.sales.Holds.CreateHold(ctx, d.c, "", bestReq(ticketingtest.SectionTier, 3)) // free: 1, 3, 5, 6
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range h.Seats {
		got = append(got, s.SeatID)
	}
	if strings.Join(got, ",") != "st_R01_3,st_R01_5,st_R01_6" && strings.Join(got, ",") != "st_R01_3,st_R01_5,st_R01_1" {
		t.Fatalf("held %v, want the 3 free seats nearest the middle", got)
	}
	_, err = d.sales.Holds.CreateHold(ctx, d.c, "", bestReq(ticketingtest.SectionTier, 2)) // 1 left
	wantCode(t, err, ticketing.CodeSeatConflict, "best_available.quantity")
}

func TestBestAvailable_Rules(t *testing.T) {
	both := bestReq(ticketingtest.SectionTier, 2)
	both.SeatIDs = []string{"st_R01_1"}
	cases := []struct {
		name  string
		req   ticketing.HoldRequest
		code  ticketing.Code
		param string
	}{
		{"with seat_ids", both, ticketing.CodeInvalidRequest, "best_available"},
		{"no tier", ticketing.HoldRequest{EventID: ptr(bestEvent), BestAvailable: &ticketing.BestAvailable{Quantity: ptr(2)}}, ticketing.CodeInvalidRequest, "best_available.tier_id"},
		{"no quantity", ticketing.HoldRequest{EventID: ptr(bestEvent), BestAvailable: &ticketing.BestAvailable{TierID: ptr(ticketingtest.SectionTier)}}, ticketing.CodeInvalidRequest, "best_available.quantity"},
		{"zero", bestReq(ticketingtest.SectionTier, 0), ticketing.CodeInvalidRequest, "best_available.quantity"},
		{"too many", bestReq(ticketingtest.SectionTier, ticketing.MaxSeatsPerHold+1), ticketing.CodeInvalidRequest, "best_available.quantity"},
		{"unknown tier", bestReq("tier_none", 2), ticketing.CodeNotFound, "best_available.tier_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := bestDomain(t)
			_, err := d.sales.Holds.CreateHold(context.Background(), d.c, "", c.req)
			wantCode(t, err, c.code, c.param)
		})
	}
}

// A general-admission tier has no seats to pick.
func TestBestAvailable_RefusesATierWithoutSeats(t *testing.T) {
	d := bestDomain(t)
	req := bestReq(ticketingtest.GATier, 2)
	req.EventID = ptr(ticketingtest.EventID)
	_, err := d.sales.Holds.CreateHold(context.Background(), d.c, "", req)
	wantCode(t, err, ticketing.CodeNotFound, "best_available.tier_id")
}
