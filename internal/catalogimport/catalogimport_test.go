package catalogimport_test

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"tix/internal/catalogimport"
	"tix/internal/ticketing"
)

var importNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// gaEvent is a valid single general-admission event as the JSON an operator writes.
func gaEvent(ref string) map[string]any {
	return map[string]any{
		"ref": ref, "status": "published", "title": "Rock Night " + ref,
		"city": "Moscow", "venue": "Club Arena",
		"starts_at": "2026-09-12T19:00:00+03:00", "ends_at": "2026-09-12T23:00:00+03:00",
		"tiers": []any{
			map[string]any{"ref": "floor", "name": "Dance floor", "price": 250000, "capacity": 500},
		},
	}
}

// seatedEvent is a valid seated event: one seated zone (rows A-B, row A VIP), one standing zone.
func seatedEvent(ref string) map[string]any {
	e := gaEvent(ref)
	e["tiers"] = []any{
		map[string]any{"ref": "stalls", "name": "Stalls", "price": 300000, "zone": "stalls"},
		map[string]any{"ref": "vip", "name": "VIP", "price": 600000, "zone": "stalls"},
		map[string]any{"ref": "standing", "name": "Standing", "price": 80000, "capacity": 40, "zone": "back"},
	}
	e["seating"] = map[string]any{
		"width": 400, "height": 300,
		"zones": []any{
			map[string]any{
				"ref": "stalls", "name": "Stalls", "type": "seated", "primary_tier": "stalls",
				"rows": []any{
					map[string]any{"row": "A", "seats": 10, "x": 50, "y": 60, "dx": 20, "tier": "vip"},
					map[string]any{"row": "B", "seats": 10, "x": 50, "y": 80, "dx": 20},
				},
			},
			map[string]any{"ref": "back", "name": "Standing area", "type": "standing"},
		},
	}
	return e
}

func seriesEvent(ref string) map[string]any {
	e := gaEvent(ref)
	delete(e, "starts_at")
	delete(e, "ends_at")
	e["kind"] = "recurring"
	e["occurrences"] = []any{
		map[string]any{"ref": "w1", "starts_at": "2026-10-01T19:00:00+03:00", "ends_at": "2026-10-01T22:00:00+03:00"},
		map[string]any{"ref": "w2", "starts_at": "2026-10-08T19:00:00+03:00", "ends_at": "2026-10-08T22:00:00+03:00"},
	}
	return e
}

// withPromos gives e the promo codes promos.
func withPromos(e map[string]any, promos ...map[string]any) map[string]any {
	list := make([]any, len(promos))
	for i, p := range promos {
		list[i] = p
	}
	e["promo_codes"] = list
	return e
}

// promo is a valid promo code: percent 1-100, fixed in kopecks.
func promo(code, typ string, value int) map[string]any {
	return map[string]any{"code": code, "type": typ, "value": value}
}

func catalogJSON(t *testing.T, events ...map[string]any) []byte {
	t.Helper()
	list := make([]any, len(events))
	for i, e := range events {
		list[i] = e
	}
	data, err := json.MarshalIndent(map[string]any{"events": list}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// at walks a decoded JSON value: at(e, "tiers", 0) is e["tiers"][0].
func at(v any, path ...any) map[string]any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v.(map[string]any)
}

func problems(t *testing.T, data []byte) []string {
	t.Helper()
	events, err := catalogimport.ParseCatalog("org_test", data, importNow)
	if err == nil {
		t.Fatalf("ParseCatalog accepted an invalid file and built %d events", len(events))
	}
	if events != nil {
		t.Errorf("events returned with an error")
	}
	if !ticketing.IsCode(err, ticketing.CodeInvalidRequest) {
		t.Errorf("error code = %s, want invalid_request", ticketing.ErrorCode(err))
	}
	list := catalogimport.ImportProblems(err)
	if len(list) == 0 {
		t.Fatalf("error carries no problem list: %v", err)
	}
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = p.String()
	}
	return out
}

func parseOK(t *testing.T, data []byte) []*ticketing.Event {
	t.Helper()
	events, err := catalogimport.ParseCatalog("org_test", data, importNow)
	if err != nil {
		t.Fatalf("ParseCatalog: %v", err)
	}
	return events
}
func TestParseCatalog_BuildsEvents(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/catalog-small.json")
	if err != nil {
		t.Fatal(err)
	}
	events := parseOK(t, data)
	if len(events) != 2 {
		t.Fatalf("got %d events, want 2", len(events))
	}

	t.Run("GeneralAdmission", func(t *testing.T) {
		e := events[0]
		if e.ID != catalogimport.CatalogEventID("org_test", "rock-night-2026") || !strings.HasPrefix(e.ID, "evt_") || len(e.ID) != 20 {
			t.Errorf("id = %s", e.ID)
		}
		if e.OrganizerID != "org_test" || e.Ref != "rock-night-2026" || e.Status != ticketing.EventPublished || e.Kind != ticketing.KindSingle {
			t.Errorf("identity = %s %s %s %s", e.OrganizerID, e.Ref, e.Status, e.Kind)
		}
		if want := time.Date(2026, 9, 12, 16, 0, 0, 0, time.UTC); !e.StartsAt.Equal(want) || e.StartsAt.Location() != time.UTC {
			t.Errorf("starts_at = %v, want %v in UTC", e.StartsAt, want)
		}
		if e.Currency != "RUB" || e.HasSeating || e.Seating != nil || len(e.Zones) != 0 {
			t.Errorf("currency %q has_seating %v zones %d", e.Currency, e.HasSeating, len(e.Zones))
		}
		if !e.CreatedAt.Equal(importNow) || !e.UpdatedAt.Equal(importNow) {
			t.Errorf("created/updated = %v/%v, want the caller's now", e.CreatedAt, e.UpdatedAt)
		}
		if len(e.Tiers) != 2 || e.Tiers[0].Capacity != 500 || e.Tiers[0].PersonsIncluded != 1 || e.Tiers[0].Seated || e.Tiers[0].ZoneID != "" {
			t.Errorf("tiers = %+v", e.Tiers)
		}
		if e.Tiers[0].Color != catalogimport.Palette[0] || e.Tiers[1].Color != "#FB8C00" {
			t.Errorf("colors = %s, %s", e.Tiers[0].Color, e.Tiers[1].Color)
		}
		if len(e.Performers) != 1 || e.Performers[0].Type != "artist" {
			t.Errorf("performers = %+v", e.Performers)
		}
		if e.Scene == nil || e.Scene.Slug != nil || len(e.Genres) != 1 || *e.Genres[0].Slug != "rock" {
			t.Errorf("scene/genres = %+v %+v", e.Scene, e.Genres)
		}
		if e.IsFree() {
			t.Error("paid event reported free")
		}
	})

	t.Run("SeriesWithSeating", func(t *testing.T) {
		e := events[1]
		if len(e.Occurrences) != 2 || e.Occurrences[0].Status != ticketing.OccurrenceScheduled {
			t.Fatalf("occurrences = %+v", e.Occurrences)
		}
		if !e.StartsAt.Equal(e.Occurrences[0].StartsAt) || !e.EndsAt.Equal(e.Occurrences[1].EndsAt) {
			t.Errorf("event window %v..%v not derived from occurrences", e.StartsAt, e.EndsAt)
		}
		stalls, vip, standing := e.Tiers[0], e.Tiers[1], e.Tiers[2]
		if !stalls.Seated || stalls.Capacity != 11 || !vip.Seated || vip.Capacity != 10 {
			t.Errorf("seated capacities: stalls %v/%d vip %v/%d, want 11 and 10", stalls.Seated, stalls.Capacity, vip.Seated, vip.Capacity)
		}
		if standing.Seated || standing.Capacity != 40 || standing.ZoneID != catalogimport.CatalogZoneID("org_test", "hamlet", "back") {
			t.Errorf("standing tier = %+v", standing)
		}
		if !e.HasSeating || e.Seating == nil || e.Seating.LayoutID != catalogimport.CatalogLayoutID("org_test", "hamlet") {
			t.Fatalf("seating = %+v", e.Seating)
		}
		zone := e.Seating.Zones[0]
		if zone.PrimaryTierID != stalls.ID || zone.ID != stalls.ZoneID || len(zone.Seats) != 21 {
			t.Errorf("zone = %s primary %s seats %d", zone.ID, zone.PrimaryTierID, len(zone.Seats))
		}
		if string(e.Seating.Decorations) == "" || string(e.Seating.Zones[1].Shape) != `{"rect": [20, 200, 360, 80]}` {
			t.Errorf("opaque JSON lost: %s / %s", e.Seating.Decorations, e.Seating.Zones[1].Shape)
		}
		want := []ticketing.ZoneSummary{
			{ID: zone.ID, Name: "Stalls", Type: ticketing.ZoneSeated, PrimaryTierID: stalls.ID, SeatCount: 21},
			{ID: standing.ZoneID, Name: "Standing area", Type: ticketing.ZoneStanding},
		}
		if !slices.Equal(e.Zones, want) {
			t.Errorf("zone summaries = %+v, want %+v", e.Zones, want)
		}
		bySeat := map[string]ticketing.Seat{}
		for _, s := range zone.Seats {
			bySeat[s.Label] = s
		}
		a1, b10, w1 := bySeat["A-1"], bySeat["B-10"], bySeat["Wheelchair 1"]
		if a1.TierID != vip.ID || a1.Row == nil || *a1.Row != "A" || *a1.Number != 1 || a1.X != 50 || a1.Y != 60 {
			t.Errorf("A-1 = %+v", a1)
		}
		if b10.TierID != "" || *b10.Number != 10 || b10.X != 50+9*20 || b10.Y != 80 {
			t.Errorf("B-10 = %+v (a primary-tier seat carries no tier id)", b10)
		}
		if w1.ID != catalogimport.CatalogSeatID("org_test", "hamlet", "stalls", "W-1") || len(w1.ID) != 15 {
			t.Errorf("W-1 id = %s", w1.ID)
		}
	})
}

func TestParseCatalog_PromoCodes(t *testing.T) {
	t.Parallel()
	summer := promo("summer-10", "percent", 10)
	summer["starts_at"], summer["ends_at"] = "2026-07-01T00:00:00+03:00", "2026-08-01T00:00:00+03:00"
	summer["tiers"] = []any{"standing", "vip"}
	friends := promo("Friends_500", "fixed", 50000)
	friends["max_uses"] = 5
	everyTier := promo("ALL-IN", "percent", 100)
	everyTier["tiers"] = []any{}
	events := parseOK(t, catalogJSON(t, withPromos(seatedEvent("a"), summer, friends, everyTier), gaEvent("b")))
	e := events[0]
	if len(e.Promos) != 3 {
		t.Fatalf("promos = %+v, want 3", e.Promos)
	}
	s, f, all := e.Promos[0], e.Promos[1], e.Promos[2]
	if s.Code != "SUMMER-10" || s.Type != ticketing.PromoPercent || s.Value != 10 || s.MaxUses != 0 {
		t.Errorf("summer = %+v", s)
	}
	wantIDs := []string{catalogimport.CatalogTierID("org_test", "a", "standing"), catalogimport.CatalogTierID("org_test", "a", "vip")}
	if !slices.Equal(s.TierIDs, wantIDs) || wantIDs[1] != e.Tiers[1].ID {
		t.Errorf("summer tier ids = %v, want %v (in the file's order)", s.TierIDs, wantIDs)
	}
	if s.StartsAt == nil || !s.StartsAt.Equal(time.Date(2026, 6, 30, 21, 0, 0, 0, time.UTC)) || s.StartsAt.Location() != time.UTC ||
		s.EndsAt == nil || !s.EndsAt.Equal(time.Date(2026, 7, 31, 21, 0, 0, 0, time.UTC)) {
		t.Errorf("summer window = %v..%v, want UTC", s.StartsAt, s.EndsAt)
	}
	if !s.AppliesTo(e.Tiers[1].ID) || s.AppliesTo(e.Tiers[0].ID) {
		t.Error("summer must apply to vip and not to stalls")
	}
	if f.Code != "FRIENDS_500" || f.Type != ticketing.PromoFixed || f.Value != 50000 || f.MaxUses != 5 ||
		f.TierIDs != nil || f.StartsAt != nil || f.EndsAt != nil {
		t.Errorf("friends = %+v", f)
	}
	if all.Code != "ALL-IN" || all.Value != 100 || len(all.TierIDs) != 0 || !all.AppliesTo(e.Tiers[0].ID) {
		t.Errorf("an empty tiers list must mean every tier: %+v", all)
	}
	if p, ok := e.Promo(" friends_500 "); !ok || p.Code != "FRIENDS_500" {
		t.Errorf("lookup by another case: %+v %v", p, ok)
	}
	if len(events[1].Promos) != 0 {
		t.Errorf("event without promo_codes has promos %+v", events[1].Promos)
	}
	other, err := catalogimport.ParseCatalog("org_other", catalogJSON(t, withPromos(seatedEvent("a"), summer)), importNow)
	if err != nil {
		t.Fatal(err)
	}
	if id := other[0].Promos[0].TierIDs[0]; id != other[0].Tiers[2].ID || id == s.TierIDs[0] {
		t.Errorf("tier id %s is not the organizer's tier id", id)
	}
}

// The promo codes example of docs/catalog-import.md, added to the complete
// example's first event, must stay valid.
func TestCatalogImportDocPromoExampleParses(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/catalog-import.md")
	if err != nil {
		t.Fatal(err)
	}
	block := func(marker string) string {
		t.Helper()
		_, b, ok := strings.Cut(string(doc), "<!-- "+marker+" -->\n```json\n")
		if !ok {
			t.Fatalf("docs/catalog-import.md lost its <!-- %s --> block", marker)
		}
		b, _, _ = strings.Cut(b, "```")
		return b
	}
	var file map[string]any
	if err := json.Unmarshal([]byte(block("catalog-example")), &file); err != nil {
		t.Fatal(err)
	}
	var fragment map[string]any
	if err := json.Unmarshal([]byte("{"+block("promo-example")+"}"), &fragment); err != nil {
		t.Fatal(err)
	}
	if len(fragment) != 1 || fragment["promo_codes"] == nil {
		t.Fatalf("the promo example must be one \"promo_codes\" member, is %v", fragment)
	}
	at(file, "events", 0)["promo_codes"] = fragment["promo_codes"]
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	e := parseOK(t, data)[0]
	if len(e.Promos) == 0 {
		t.Fatal("the promo example builds no promo codes")
	}
	for _, p := range e.Promos {
		if p.Code != strings.ToUpper(p.Code) {
			t.Errorf("code %q not upper-cased", p.Code)
		}
	}
}

func TestParseCatalog_IDsAreDeterministic(t *testing.T) {
	t.Parallel()
	data := catalogJSON(t, seatedEvent("a"), seriesEvent("b"))
	first := parseOK(t, data)
	again, err := catalogimport.ParseCatalog("org_test", data, importNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	other, err := catalogimport.ParseCatalog("org_other", data, importNow)
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		if first[i].ID != again[i].ID || first[i].Tiers[0].ID != again[i].Tiers[0].ID {
			t.Errorf("event %d: ids changed between imports", i)
		}
		if first[i].ID == other[i].ID || first[i].Tiers[0].ID == other[i].Tiers[0].ID {
			t.Errorf("event %d: two organizers got the same ids", i)
		}
	}
	if first[1].Occurrences[0].ID != again[1].Occurrences[0].ID {
		t.Error("occurrence id changed between imports")
	}
	if s1, s2 := first[0].Seating.Zones[0].Seats[5].ID, again[0].Seating.Zones[0].Seats[5].ID; s1 != s2 {
		t.Errorf("seat id changed: %s vs %s", s1, s2)
	}
	if tier, zone := catalogimport.CatalogTierID("o", "e", "x"), catalogimport.CatalogZoneID("o", "e", "x"); tier[5:] == zone[5:] {
		t.Errorf("tier and zone sharing a ref share an id suffix: %s %s", tier, zone)
	}
}

func TestParseCatalog_Defaults(t *testing.T) {
	t.Parallel()
	e := gaEvent("a")
	delete(e, "status")
	e["starts_at"] = "2026-09-12T19:00:00.987+03:00"
	events := parseOK(t, catalogJSON(t, e))
	got := events[0]
	if got.Status != ticketing.EventDraft || got.Kind != ticketing.KindSingle || got.Timezone != catalogimport.DefaultTimezone {
		t.Errorf("defaults: status %s kind %s timezone %s", got.Status, got.Kind, got.Timezone)
	}
	if got.StartsAt != time.Date(2026, 9, 12, 16, 0, 0, 0, time.UTC) {
		t.Errorf("starts_at = %v, want truncated to the second in UTC", got.StartsAt)
	}
	if got.Slug != nil || got.Description != nil || got.Scene != nil || got.Genres == nil || got.Performers == nil || got.Occurrences == nil {
		t.Errorf("absent optional fields must be null and absent lists empty: %+v", got)
	}
}

func TestParseCatalog_FreeEvent(t *testing.T) {
	t.Parallel()
	e := gaEvent("a")
	at(e, "tiers", 0)["price"] = 0
	events := parseOK(t, catalogJSON(t, e))
	if !events[0].IsFree() || events[0].Tiers[0].Price != 0 {
		t.Error("an event whose tiers are all free must be free")
	}
	e2 := gaEvent("b")
	e2["tiers"] = append(e2["tiers"].([]any), map[string]any{"ref": "free", "name": "Kids", "price": 0, "capacity": 10})
	if parseOK(t, catalogJSON(t, e2))[0].IsFree() {
		t.Error("an event with a paid tier is not free")
	}
}

func TestParseCatalog_RowGeneratorStart(t *testing.T) {
	t.Parallel()
	e := seatedEvent("a")
	r := at(e, "seating", "zones", 0, "rows", 1)
	r["start"], r["seats"], r["dx"], r["dy"] = 5, 3, 0, -2.5
	events := parseOK(t, catalogJSON(t, e))
	var labels []string
	var ys []float64
	for _, s := range events[0].Seating.Zones[0].Seats {
		if *s.Row == "B" {
			labels = append(labels, s.Label)
			ys = append(ys, s.Y)
		}
	}
	if !slices.Equal(labels, []string{"B-5", "B-6", "B-7"}) || !slices.Equal(ys, []float64{80, 77.5, 75}) {
		t.Errorf("row B = %v at %v", labels, ys)
	}
}

func TestBuildCatalog_ValidatesGoInput(t *testing.T) {
	t.Parallel()
	price := int64(-1)
	_, err := catalogimport.BuildCatalog("org_test", &catalogimport.CatalogFile{Events: []catalogimport.ImportEvent{{
		Ref: "a", Title: "A", City: "C", Venue: "V", StartsAt: "2026-09-12T19:00:00Z", EndsAt: "2026-09-12T20:00:00Z",
		Tiers: []catalogimport.ImportTier{{Ref: "t", Name: "T", Price: &price, Capacity: new(1)}},
	}}}, importNow)
	if got := catalogimport.ImportProblems(err); len(got) != 1 || got[0].String() != "events[0].tiers[0].price: must be >= 0" {
		t.Errorf("problems = %v", got)
	}
}

func TestParseCatalog_AllowsMaximumSeats(t *testing.T) {
	t.Parallel()
	e := seatedEvent("a")
	var rows []any
	for i := range catalogimport.MaxSeatsPerEvent / 1000 {
		rows = append(rows, map[string]any{"row": "R" + strconv.Itoa(i), "seats": 1000, "x": 0, "y": i, "dx": 1, "tier": "vip"})
	}
	at(e, "seating", "zones", 0)["rows"] = rows
	at(e, "tiers", 0)["zone"] = "back"
	at(e, "tiers", 0)["capacity"] = 10
	at(e, "seating", "zones", 0)["primary_tier"] = "vip"
	events := parseOK(t, catalogJSON(t, e))
	if n := len(events[0].Seating.Zones[0].Seats); n != catalogimport.MaxSeatsPerEvent {
		t.Errorf("seats = %d, want %d", n, catalogimport.MaxSeatsPerEvent)
	}
}

// The complete example of docs/catalog-import.md must stay valid.
func TestCatalogImportDocExampleParses(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/catalog-import.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "<!-- catalog-example -->\n```json\n")
	if !ok {
		t.Fatal("docs/catalog-import.md lost its <!-- catalog-example --> block")
	}
	block, _, _ = strings.Cut(block, "```")
	events := parseOK(t, []byte(block))
	small, err := os.ReadFile("testdata/catalog-small.json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(small)) != strings.TrimSpace(block) {
		t.Error("the doc example and testdata/catalog-small.json differ")
	}
	if len(events) != 2 || events[1].Tiers[0].Capacity != 11 || events[1].Tiers[1].Capacity != 10 {
		t.Errorf("doc example builds %d events with unexpected capacities", len(events))
	}
}
