package ticketing_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// mapReads counts the reads of seating maps.
type mapReads struct {
	ticketing.SalesCatalog
	n atomic.Int64
}

func (m *mapReads) GetEventWithSeating(ctx context.Context, org, id string, env ticketing.Environment) (*ticketing.Event, error) {
	m.n.Add(1)
	return m.SalesCatalog.GetEventWithSeating(ctx, org, id, env)
}

// Holds read an event's seating map once per process while the event is
// unchanged (the event item alone each DefaultEventCacheTTL), and again once
// it changed.
func TestHolds_ReadTheSeatingMapOnceWhileTheEventIsUnchanged(t *testing.T) {
	d := bestDomain(t)
	ctx := context.Background()
	reads := &mapReads{SalesCatalog: d.sales.Holds.Catalog}
	d.sales.Holds.Catalog = reads
	for range 3 {
		if _, err := d.sales.Holds.CreateHold(ctx, d.c, "", bestReq(ticketingtest.SectionTier, 1)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(ticketing.DefaultEventCacheTTL + 50*time.Millisecond)
	if _, err := d.sales.Holds.CreateHold(ctx, d.c, "", bestReq(ticketingtest.SectionTier, 1)); err != nil {
		t.Fatal(err)
	}
	if n := reads.n.Load(); n != 1 {
		t.Fatalf("%d seating map reads for 4 holds of an unchanged event, want 1", n)
	}
	e := ticketingtest.SectionEvent(d.now, bestEvent, 0, ticketingtest.Section{ID: "st", Name: "Stalls", SortOrder: 1, Rows: 1, PerRow: 4})
	e.UpdatedAt = d.now.Add(time.Minute)
	if err := d.st.Catalog.PutEvent(ctx, e); err != nil {
		t.Fatal(err)
	}
	time.Sleep(ticketing.DefaultEventCacheTTL + 50*time.Millisecond)
	h, err := d.sales.Holds.CreateHold(ctx, d.c, "", ticketing.HoldRequest{EventID: ptr(bestEvent), SeatIDs: []string{"st_R01_4"}})
	if err != nil || reads.n.Load() != 2 || h.Seats[0].Label != "Stalls R01-4" {
		t.Fatalf("after the event changed: %d map reads (%v), want 2 and the new map", reads.n.Load(), err)
	}
}

// catalogMapReads is the seating read's part of a CatalogStore over the
// memory store, counting the reads of seating maps.
type catalogMapReads struct {
	ticketing.CatalogStore // nil: Seating calls only the methods below
	st                     ticketing.SalesCatalog
	n                      atomic.Int64
}

func (m *catalogMapReads) GetEventWithSeating(ctx context.Context, org, id string, env ticketing.Environment) (*ticketing.Event, error) {
	m.n.Add(1)
	return m.st.GetEventWithSeating(ctx, org, id, env)
}

func (m *catalogMapReads) GetEvent(ctx context.Context, org, id string, env ticketing.Environment) (*ticketing.Event, error) {
	return m.st.GetEvent(ctx, org, id, env)
}

func (m *catalogMapReads) StockOf(ctx context.Context, e *ticketing.Event, env ticketing.Environment, occurrenceID string) (*ticketing.Stock, error) {
	return m.st.StockOf(ctx, e, env, occurrenceID)
}

// The seating map read keeps the decoded map while its event is unchanged
// (the event item is read on every call: no wait, no TTL) and reads the seat
// statuses fresh on every call: a seat held between two reads shows taken
// at once; a changed event's new map shows at once.
func TestCatalog_SeatingKeepsTheMapAndReadsStatusesFresh(t *testing.T) {
	d := bestDomain(t)
	ctx := context.Background()
	reads := &catalogMapReads{st: d.st.Catalog}
	cat := &ticketing.Catalog{Store: reads, Clock: d.clk, Maps: &ticketing.SeatingMaps{}}
	taken := func(seatID string) (bool, *ticketing.EventView) {
		t.Helper()
		v, err := cat.Seating(ctx, d.c.Tenant, bestEvent, "")
		if err != nil {
			t.Fatal(err)
		}
		return v.Stock.SeatTaken(v.OccurrenceID, seatID, v.Now), v
	}
	if got, _ := taken("st_R01_1"); got {
		t.Fatal("st_R01_1 taken before any hold")
	}
	if _, err := d.sales.Holds.CreateHold(ctx, d.c, "", ticketing.HoldRequest{EventID: ptr(bestEvent), SeatIDs: []string{"st_R01_1"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := taken("st_R01_1"); !got {
		t.Fatal("st_R01_1 not taken right after its hold: statuses must be read fresh")
	}
	if n := reads.n.Load(); n != 1 {
		t.Fatalf("%d map reads for 2 reads of an unchanged event, want 1", n)
	}
	e := ticketingtest.SectionEvent(d.now, bestEvent, 0, ticketingtest.Section{ID: "st", Name: "Stalls", SortOrder: 1, Rows: 1, PerRow: 4})
	e.UpdatedAt = d.now.Add(time.Minute)
	if err := d.st.Catalog.PutEvent(ctx, e); err != nil {
		t.Fatal(err)
	}
	_, v := taken("st_R01_1")
	if n := reads.n.Load(); n != 2 || len(v.Event.Seating.Zones) != 1 || len(v.Event.Seating.Zones[0].Seats) != 4 {
		t.Fatalf("after the event changed: %d map reads, want 2 and the new map (1 zone of 4 seats)", n)
	}
	if _, err := cat.Seating(ctx, ticketing.Tenant{OrganizerID: "org_other", Environment: ticketing.EnvTest}, bestEvent, ""); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Fatalf("another organizer read the kept map: %v", err)
	}
}
