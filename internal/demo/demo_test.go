package demo_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/catalogimport"
	"tix/internal/demo"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

var now = time.Date(2026, 6, 1, 9, 30, 0, 0, time.UTC)

func TestSeed_CatalogHasEveryKindOfEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t, nil)
	res, err := demo.Seed(ctx, st, now)
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if !res.Created || len(res.Organizers) != 2 || len(res.Events) != 9 {
		t.Fatalf("result: created %v, %d organizers, %d events", res.Created, len(res.Organizers), len(res.Events))
	}
	org, err := st.Organizers.GetOrganizer(ctx, demo.OrganizerID)
	if err != nil || !org.Verified || org.Name != demo.OrganizerName {
		t.Fatalf("demo organizer = %+v, %v", org, err)
	}
	if other, err := st.Organizers.GetOrganizer(ctx, demo.OtherOrganizerID); err != nil || other.Verified {
		t.Fatalf("other organizer = %+v, %v", other, err)
	}
	// make run's printed order buys for demo.BuyerEmail: org_demo's own
	// address, so its test-mode tickets email is sent.
	if id, err := st.Emails.GetIdentity(ctx, demo.OrganizerID); err != nil || !id.OwnAddress(demo.BuyerEmail) {
		t.Fatalf("demo organizer's identity %+v (%v): %s is not its test recipient", id, err, demo.BuyerEmail)
	}
	get := func(ref string) *ticketing.Event {
		t.Helper()
		e, err := st.Catalog.GetEventWithSeating(ctx, demo.OrganizerID, catalogimport.CatalogEventID(demo.OrganizerID, ref), ticketing.EnvTest)
		if err != nil {
			t.Fatalf("event %s: %v", ref, err)
		}
		return e
	}

	t.Run("Stadium", func(t *testing.T) {
		e := get(demo.RefStadium)
		seats := 0
		for _, z := range e.Seating.Zones {
			seats += len(z.Seats)
		}
		if demo.StadiumSeats != 50000 || seats != demo.StadiumSeats || len(e.Tiers) != 4 || e.SeatBlocks != ticketing.SeatBlocks || !e.IsSalesOpen("", now) {
			t.Fatalf("stadium: %d seats, %d tiers, %d seat blocks, on sale %v", seats, len(e.Tiers), e.SeatBlocks, e.IsSalesOpen("", now))
		}
		st, err := st.Catalog.GetStock(ctx, e.ID, ticketing.EnvTest, "")
		if err != nil || len(st.Seats) != 0 {
			t.Fatalf("stadium stock: %d seat items (%v), want none: only taken seats get an item", len(st.Seats), err)
		}
	})

	t.Run("GeneralAdmissionConcert", func(t *testing.T) {
		e := get(demo.RefConcert)
		if len(e.Tiers) != 2 || e.HasSeating || e.Latitude == nil || len(e.Performers) == 0 || len(e.Genres) == 0 || e.Scene == nil {
			t.Errorf("concert = %+v", e)
		}
		if d := e.StartsAt.Sub(now); d < 29*24*time.Hour || d > 31*24*time.Hour || !e.IsSalesOpen("", now) {
			t.Errorf("concert starts in %v, sales open %v", d, e.IsSalesOpen("", now))
		}
		if len(e.Promos) != 2 {
			t.Fatalf("concert promo codes = %+v, want 2", e.Promos)
		}
		pct, ok := e.Promo("demo10")
		if !ok || pct.Code != demo.PromoPercent || pct.Type != ticketing.PromoPercent || pct.Value != 10 || pct.MaxUses != 0 ||
			len(pct.TierIDs) != 0 || !pct.Active(now) {
			t.Errorf("%s = %+v, %v", demo.PromoPercent, pct, ok)
		}
		fixed, ok := e.Promo(demo.PromoFixed)
		if !ok || fixed.Type != ticketing.PromoFixed || fixed.Value != 50000 || fixed.MaxUses != 5 || len(fixed.TierIDs) != 0 || !fixed.Active(now) {
			t.Errorf("%s = %+v, %v", demo.PromoFixed, fixed, ok)
		}
		for _, ref := range []string{demo.RefTheatre, demo.RefSeries, demo.RefFree} {
			if p := get(ref).Promos; len(p) != 0 {
				t.Errorf("%s has promo codes %+v", ref, p)
			}
		}
	})
	t.Run("SeatedTheatre", func(t *testing.T) {
		e := get(demo.RefTheatre)
		seats, seatedZones, standing := 0, 0, 0
		for _, z := range e.Seating.Zones {
			seats += len(z.Seats)
			switch z.Type {
			case ticketing.ZoneSeated:
				seatedZones++
			case ticketing.ZoneStanding:
				standing++
			}
		}
		if seats < 200 || seatedZones < 2 || standing != 1 {
			t.Errorf("seats %d, seated zones %d, standing zones %d", seats, seatedZones, standing)
		}
		vip, _ := e.Tier(catalogimport.CatalogTierID(demo.OrganizerID, demo.RefTheatre, "vip"))
		stand, _ := e.Tier(catalogimport.CatalogTierID(demo.OrganizerID, demo.RefTheatre, "standing"))
		if vip == nil || !vip.Seated || vip.Capacity != 15 || stand == nil || stand.Seated || stand.Capacity != 60 {
			t.Errorf("vip %+v standing %+v", vip, stand)
		}
	})
	t.Run("RecurringSeries", func(t *testing.T) {
		e := get(demo.RefSeries)
		if e.Kind != ticketing.KindRecurring || len(e.Occurrences) < 3 || e.NextOccurrence(now) == nil {
			t.Errorf("series: kind %s, %d occurrences", e.Kind, len(e.Occurrences))
		}
	})
	t.Run("FreeEvent", func(t *testing.T) {
		if e := get(demo.RefFree); !e.IsFree() {
			t.Error("free event is not free")
		}
	})
	t.Run("SalesEnded", func(t *testing.T) {
		e := get(demo.RefSalesEnded)
		if e.SalesEndAt == nil || !e.SalesEndAt.Before(now) || !e.StartsAt.After(now) || e.IsSalesOpen("", now) {
			t.Errorf("sales-ended event: sales_end_at %v starts %v open %v", e.SalesEndAt, e.StartsAt, e.IsSalesOpen("", now))
		}
	})
	t.Run("PastEvent", func(t *testing.T) {
		if e := get(demo.RefPast); !e.IsOver(now) {
			t.Error("past event is not over")
		}
	})
	t.Run("DraftIsHiddenFromKeys", func(t *testing.T) {
		id := catalogimport.CatalogEventID(demo.OrganizerID, demo.RefDraft)
		if _, err := st.Catalog.GetEvent(ctx, demo.OrganizerID, id, ticketing.EnvTest); !ticketing.IsCode(err, ticketing.CodeNotFound) {
			t.Errorf("draft visible: %v", err)
		}
		if e := res.Event(demo.OrganizerID, demo.RefDraft); e == nil || e.Status != ticketing.EventDraft {
			t.Errorf("draft in result = %+v", e)
		}
	})
	t.Run("OtherOrganizer", func(t *testing.T) {
		id := catalogimport.CatalogEventID(demo.OtherOrganizerID, demo.RefOther)
		if _, err := st.Catalog.GetEvent(ctx, demo.OtherOrganizerID, id, ticketing.EnvTest); err != nil {
			t.Errorf("other organizer's event: %v", err)
		}
		if _, err := st.Catalog.GetEvent(ctx, demo.OrganizerID, id, ticketing.EnvTest); !ticketing.IsCode(err, ticketing.CodeNotFound) {
			t.Errorf("org_demo sees org_other's event: %v", err)
		}
	})

	t.Run("SecondSeedWritesNothing", func(t *testing.T) {
		again, err := demo.Seed(ctx, st, now.Add(72*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if again.Created || len(again.Events) != len(res.Events) || len(again.Organizers) != 2 {
			t.Fatalf("second seed: created %v, %d events", again.Created, len(again.Events))
		}
		for i, e := range again.Events {
			if e.ID != res.Events[i].ID || !e.StartsAt.Equal(res.Events[i].StartsAt) {
				t.Errorf("event %s changed on the second seed", e.Ref)
			}
		}
		if th := again.Event(demo.OrganizerID, demo.RefTheatre); th == nil || th.Seating == nil {
			t.Error("existing theatre returned without its map")
		}
	})
}

func TestSeed_ReimportReplacesPromoCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t, nil)
	if _, err := demo.Seed(ctx, st, now); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	f := demo.Catalog(now)
	f.Events = f.Events[:1] // the concert
	f.Events[0].PromoCodes = []catalogimport.ImportPromo{{Code: "late-bird", Type: "percent", Value: new(int64(5)), Tiers: []string{"fan-zone"}}}
	events, err := catalogimport.BuildCatalog(demo.OrganizerID, f, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Catalog.ImportCatalog(ctx, demo.OrganizerID, events); err != nil {
		t.Fatalf("re-import: %v", err)
	}
	id := catalogimport.CatalogEventID(demo.OrganizerID, demo.RefConcert)
	e, err := st.Catalog.GetCatalogEvent(ctx, demo.OrganizerID, id)
	if err != nil {
		t.Fatal(err)
	}
	fanZone := catalogimport.CatalogTierID(demo.OrganizerID, demo.RefConcert, "fan-zone")
	if len(e.Promos) != 1 || e.Promos[0].Code != "LATE-BIRD" || len(e.Promos[0].TierIDs) != 1 || e.Promos[0].TierIDs[0] != fanZone {
		t.Errorf("promo codes after the re-import = %+v, want only LATE-BIRD for the fan zone", e.Promos)
	}
	if _, ok := e.Promo(demo.PromoPercent); ok {
		t.Errorf("%s survived a re-import without it", demo.PromoPercent)
	}
}

func TestLargeSeatedEvent(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 49, 120, 2000} {
		events, err := catalogimport.BuildCatalog("org_bench", &catalogimport.CatalogFile{
			Events: []catalogimport.ImportEvent{demo.LargeSeatedEvent("bench", n, now)},
		}, now)
		if err != nil {
			t.Fatalf("%d seats: %v", n, err)
		}
		got, capacity := len(events[0].Seating.Zones[0].Seats), 0
		for _, tier := range events[0].Tiers {
			capacity += tier.Capacity
		}
		if got != n || capacity != n {
			t.Errorf("%d seats requested: %d seats, capacity %d", n, got, capacity)
		}
	}
}
