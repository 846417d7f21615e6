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
