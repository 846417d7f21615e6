package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"tix/internal/ticketing"
)

func sp(s string) *string       { return &s }
func tp(t time.Time) *time.Time { return &t }
func ip(i int) *int             { return &i }
func fp(f float64) *float64     { return &f }
func day(n int) time.Duration   { return time.Duration(n) * 24 * time.Hour }

// baseEvent is a published single event starting in `in`, lasting three hours.
func baseEvent(org, id, title string, in time.Duration) *ticketing.Event {
	start := t0.Add(in)
	return &ticketing.Event{
		ID: id, OrganizerID: org, Ref: id, Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: title, Slug: sp(id), City: "Moscow", Venue: "Main Hall", StartsAt: start, EndsAt: start.Add(3 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", Genres: []ticketing.Genre{}, Performers: []ticketing.Performer{},
		Occurrences: []ticketing.Occurrence{}, CreatedAt: t0.Add(-in), UpdatedAt: t0,
		Tiers: []ticketing.Tier{{ID: id + "_ga", Ref: "ga", Name: "General admission", Price: 150000, Capacity: 100, PersonsIncluded: 1, Color: "#2196F3"}},
	}
}

// fixture ids
const (
	orgA = "org_a"
	orgB = "org_b"
)

func (h *harness) seedCatalog() map[string]*ticketing.Event {
	h.t.Helper()
	h.organizer(orgA)
	h.organizer(orgB)
	evs := map[string]*ticketing.Event{}

	concert := baseEvent(orgA, "evt_concert", "Rock Night", day(30))
	concert.Venue, concert.City = "Adrenaline Stadium", "Moscow"
	concert.Description = sp("Loud.")
	concert.Latitude, concert.Longitude = fp(55.79), fp(37.55)
	concert.Genres = []ticketing.Genre{{ID: "gen_rock", Name: "Rock", Slug: sp("rock")}}
	concert.Scene = &ticketing.Scene{ID: "scn_main", Name: "Main Scene"}
	concert.Performers = []ticketing.Performer{{Name: "The Band", Type: "artist", DurationMin: ip(90)}}
	concert.Tiers = append(concert.Tiers, ticketing.Tier{ID: "evt_concert_vip", Ref: "vip", Name: "VIP", Price: 900000, Capacity: 10, PersonsIncluded: 2, Color: "#FFC107",
		SalesStartAt: tp(t0.Add(day(1)))})
	concert.Promos = []ticketing.Promo{
		{Code: "TEN", Type: ticketing.PromoPercent, Value: 10},
		{Code: "ONCE", Type: ticketing.PromoFixed, Value: 50000, MaxUses: 1},
		{Code: "VIPHALF", Type: ticketing.PromoPercent, Value: 50, TierIDs: []string{"evt_concert_vip"}},
		{Code: "LATER", Type: ticketing.PromoPercent, Value: 20, StartsAt: tp(t0.Add(day(2)))},
	}
	evs["concert"] = concert

	theatre := baseEvent(orgA, "evt_theatre", "Hamlet", day(10))
	theatre.City, theatre.Venue = "Saint Petersburg", "Alexandrinsky Theatre"
	theatre.HasSeating = true
	theatre.Tiers = []ticketing.Tier{
		{ID: "tier_stalls", Ref: "stalls", Name: "Stalls", Price: 300000, Capacity: 0, PersonsIncluded: 1, ZoneID: "zone_stalls", Seated: true, Color: "#E91E63"},
		{ID: "tier_box", Ref: "box", Name: "Box", Price: 500000, Capacity: 0, PersonsIncluded: 1, ZoneID: "zone_stalls", Seated: true, Color: "#9C27B0"},
		{ID: "tier_stand", Ref: "stand", Name: "Standing", Price: 100000, Capacity: 40, PersonsIncluded: 1, ZoneID: "zone_pit", Color: "#4CAF50"},
	}
	var seats []ticketing.Seat
	for r := 0; r < 3; r++ {
		for n := 1; n <= 5; n++ {
			row := string(rune('A' + r))
			s := ticketing.Seat{ID: fmt.Sprintf("seat_%s%d", row, n), Label: fmt.Sprintf("%s-%d", row, n), Row: sp(row), Number: ip(n), X: float64(n * 10), Y: float64(r * 10)}
			if r == 0 {
				s.TierID = "tier_box"
			}
			seats = append(seats, s)
		}
	}
	theatre.Tiers[0].Capacity, theatre.Tiers[1].Capacity = 10, 5
	theatre.Seating = &ticketing.Seating{LayoutID: "lay_1", Width: 100, Height: 50, Decorations: json.RawMessage(`{"stage":{"x":0,"y":40}}`),
		Zones: []ticketing.Zone{
			{ID: "zone_stalls", Name: "Stalls", Type: ticketing.ZoneSeated, Color: "#E91E63", SortOrder: 1, PrimaryTierID: "tier_stalls", Seats: seats},
			{ID: "zone_pit", Name: "Pit", Type: ticketing.ZoneStanding, Color: "#4CAF50", SortOrder: 2, Shape: json.RawMessage(`{"rect":[0,0,10,10]}`)},
		}}
	theatre.Zones = []ticketing.ZoneSummary{{ID: "zone_stalls", Name: "Stalls", Type: ticketing.ZoneSeated, PrimaryTierID: "tier_stalls", SeatCount: 15}, {ID: "zone_pit", Name: "Pit", Type: ticketing.ZoneStanding}}
	evs["theatre"] = theatre

	series := baseEvent(orgA, "evt_series", "Jazz Tuesdays", day(3))
	series.Kind = ticketing.KindRecurring
	series.Venue = "Blue Note Club"
	for i := 0; i < 3; i++ {
		st := t0.Add(day(3 + 7*i))
		series.Occurrences = append(series.Occurrences, ticketing.Occurrence{ID: fmt.Sprintf("occ_%d", i+1), StartsAt: st, EndsAt: st.Add(2 * time.Hour), Status: ticketing.OccurrenceScheduled})
	}
	series.StartsAt, series.EndsAt = series.Occurrences[0].StartsAt, series.Occurrences[2].EndsAt
	evs["series"] = series

	free := baseEvent(orgA, "evt_free", "Open Lecture", day(5))
	free.Tiers[0].Price = 0
	evs["free"] = free

	ended := baseEvent(orgA, "evt_ended", "Sold Before", day(20))
	ended.SalesEndAt = tp(t0.Add(-day(1)))
	evs["ended"] = ended

	past := baseEvent(orgA, "evt_past", "Last Year", -day(30))
	evs["past"] = past

	draft := baseEvent(orgA, "evt_draft", "Secret Draft", day(40))
	draft.Status = ticketing.EventDraft
	evs["draft"] = draft

	other := baseEvent(orgB, "evt_other", "Other Org Show", day(15))
	evs["other"] = other

	for _, e := range evs {
		if err := h.st.Catalog.PutEvent(context.Background(), e); err != nil {
			h.t.Fatal(err)
		}
	}
	return evs
}
