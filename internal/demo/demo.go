// Package demo seeds the local stack and tests with a believable catalog: two
// organizers and events of every kind the API serves (general admission, a
// seating map, a recurring series, free, sales ended, past, draft), and promo
// codes on the general-admission concert. The catalog is written in the import
// format (catalogimport.CatalogFile), with dates relative to the caller's now, and
// goes through the same validation as a file.
package demo

import (
	"context"
	"fmt"
	"time"

	"tix/internal/catalogimport"
	"tix/internal/store"
	"tix/internal/ticketing"
)

// The demo organizers.
const (
	OrganizerID        = "org_demo"
	OrganizerName      = "Demo Concerts & Theatre"
	OtherOrganizerID   = "org_other"
	OtherOrganizerName = "Other Organizer"
)

// BuyerEmail is the buyer address of the orders make run's printed lines
// create: org_demo's test recipient, so its test-mode emails are sent (any
// other address's are skipped, as for every organizer).
const BuyerEmail = "you@example.com"

// Refs of the demo events; catalogimport.CatalogEventID(OrganizerID, ref) is the id.
const (
	RefConcert    = "rock-night"     // published, general admission, two tiers, in ~30 days
	RefTheatre    = "hamlet"         // published, seating map: stalls (VIP row A), balcony, standing
	RefSeries     = "jazz-tuesdays"  // published, recurring, four weekly occurrences
	RefFree       = "open-lecture"   // published, one free tier
	RefSalesEnded = "farewell-show"  // published, in the future, sales_end_at in the past
	RefPast       = "spring-gala"    // published, ended a month ago
	RefDraft      = "secret-show"    // draft
	RefOther      = "other-festival" // published, org_other's
)

// Promo codes of the general-admission concert (RefConcert).
const (
	PromoPercent = "DEMO10"     // 10% off any tier, unlimited
	PromoFixed   = "FRIENDS500" // 500.00 RUB (50000 kopecks) off, at most 5 orders
)

// Result is what the demo catalog holds.
type Result struct {
	// Created is false when the demo data already existed and nothing was written.
	Created    bool
	Organizers []ticketing.Organizer
	// Events are org_demo's, then org_other's, in catalog order.
	Events []*ticketing.Event
}

// Event returns the demo event with the given organizer and ref, or nil.
func (r *Result) Event(organizerID, ref string) *ticketing.Event {
	for _, e := range r.Events {
		if e.OrganizerID == organizerID && e.Ref == ref {
			return e
		}
	}
	return nil
}

// Seed writes the demo organizers and catalogs unless org_demo already exists, in
// which case it writes nothing and returns what is there. org_demo is created
// last, so a Seed that failed half-way is completed by the next one. Either
// way org_demo's test recipient is BuyerEmail. It creates no keys.
func Seed(ctx context.Context, st *store.Store, now time.Time) (*Result, error) {
	res, err := seed(ctx, st, now)
	if err != nil {
		return nil, err
	}
	if _, err := st.Emails.AddTestRecipient(ctx, OrganizerID, BuyerEmail); err != nil {
		return nil, fmt.Errorf("seed the demo organizer's test recipient: %w", err)
	}
	return res, nil
}

func seed(ctx context.Context, st *store.Store, now time.Time) (*Result, error) {
	if _, err := st.Organizers.GetOrganizer(ctx, OrganizerID); err == nil {
		return existing(ctx, st, now)
	} else if !ticketing.IsCode(err, ticketing.CodeNotFound) {
		return nil, fmt.Errorf("seed demo data: %w", err)
	}
	res := &Result{Created: true}
	other := ticketing.Organizer{ID: OtherOrganizerID, Name: OtherOrganizerName, CreatedAt: now.UTC()}
	demo := ticketing.Organizer{ID: OrganizerID, Name: OrganizerName, Verified: true, CreatedAt: now.UTC()}
	if err := createOrganizer(ctx, st, other); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		org string
		f   *catalogimport.CatalogFile
	}{{OrganizerID, Catalog(now)}, {OtherOrganizerID, OtherCatalog(now)}} {
		events, err := catalogimport.BuildCatalog(c.org, c.f, now.UTC())
		if err != nil {
			return nil, fmt.Errorf("build demo catalog of %s: %w", c.org, err)
		}
		if err := st.Catalog.ImportCatalog(ctx, c.org, events); err != nil {
			return nil, fmt.Errorf("import demo catalog of %s: %w", c.org, err)
		}
		res.Events = append(res.Events, events...)
	}
	if err := createOrganizer(ctx, st, demo); err != nil {
		return nil, err
	}
	res.Organizers = []ticketing.Organizer{demo, other}
	return res, nil
}

// createOrganizer creates o; one that already exists (an earlier, interrupted
// Seed, or a concurrent one) is fine.
func createOrganizer(ctx context.Context, st *store.Store, o ticketing.Organizer) error {
	if err := st.Organizers.CreateOrganizer(ctx, o); err != nil && !ticketing.IsCode(err, ticketing.CodeConflict) {
		return fmt.Errorf("seed organizer %s: %w", o.ID, err)
	}
	return nil
}

// existing reads the demo data back: the organizers and every demo event found.
func existing(ctx context.Context, st *store.Store, now time.Time) (*Result, error) {
	res := &Result{}
	for _, id := range []string{OrganizerID, OtherOrganizerID} {
		o, err := st.Organizers.GetOrganizer(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("read demo organizer: %w", err)
		}
		res.Organizers = append(res.Organizers, *o)
	}
	for _, c := range []struct {
		org string
		f   *catalogimport.CatalogFile
	}{{OrganizerID, Catalog(now)}, {OtherOrganizerID, OtherCatalog(now)}} {
		for _, ie := range c.f.Events {
			e, err := st.Catalog.GetCatalogEvent(ctx, c.org, catalogimport.CatalogEventID(c.org, ie.Ref))
			if ticketing.IsCode(err, ticketing.CodeNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read demo event %s: %w", ie.Ref, err)
			}
			res.Events = append(res.Events, e)
		}
	}
	return res, nil
}

// moscow is Europe/Moscow, which has kept UTC+3 all year since 2014; a fixed
// zone needs no time zone database.
var moscow = time.FixedZone("MSK", 3*60*60)

// at is hour:00 Moscow time, days after now's date in Moscow, as RFC 3339.
func at(now time.Time, days, hour int) string {
	d := now.In(moscow)
	return time.Date(d.Year(), d.Month(), d.Day()+days, hour, 0, 0, 0, moscow).Format(time.RFC3339)
}

func price(kopecks int64) *int64 { return &kopecks }

func count(n int) *int { return &n }

// value is a promo code's value: a whole percent or kopecks.
func value(v int64) *int64 { return &v }

func coord(v float64) *float64 { return &v }

func gaTier(ref, name string, kopecks int64, capacity int) catalogimport.ImportTier {
	return catalogimport.ImportTier{Ref: ref, Name: name, Price: price(kopecks), Capacity: count(capacity)}
}

// Catalog is org_demo's catalog, dated relative to now.
func Catalog(now time.Time) *catalogimport.CatalogFile {
	salesEnded := now.Add(-24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	salesStarted := now.Add(-30 * 24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	return &catalogimport.CatalogFile{Events: []catalogimport.ImportEvent{
		{
			Ref: RefConcert, Status: "published", Title: "Rock Night: The Examples", Slug: "rock-night",
			Description: "Two bands, one long night. Doors open an hour before the start.",
			City:        "Moscow", Venue: "Arena Club", Address: "Leningradsky Prospekt 31, Moscow",
			CoverURL:     "https://picsum.photos/seed/tix-rock/800/450",
			CoverWideURL: "https://picsum.photos/seed/tix-rock-wide/1600/600",
			Latitude:     coord(55.7887), Longitude: coord(37.5496),
			StartsAt: at(now, 30, 19), EndsAt: at(now, 30, 23), Timezone: "Europe/Moscow", AgeRestriction: count(16),
			Genres: []catalogimport.ImportGenre{{ID: "rock", Name: "Rock", Slug: "rock"}, {ID: "indie", Name: "Indie", Slug: "indie"}},
			Scene:  &catalogimport.ImportScene{ID: "arena-club", Name: "Arena Club Stage", Slug: "arena-club"},
			Performers: []catalogimport.ImportPerformer{
				{Name: "The Examples", Slug: "the-examples", Type: "band", StartsAt: at(now, 30, 21), DurationMin: count(90)},
				{Name: "Placeholder Trio", Slug: "placeholder-trio", StartsAt: at(now, 30, 19), DurationMin: count(60)},
			},
			Tiers: []catalogimport.ImportTier{
				gaTier("dance-floor", "Dance floor", 250000, 800),
				gaTier("fan-zone", "Fan zone", 450000, 150),
			},
			PromoCodes: []catalogimport.ImportPromo{
				{Code: PromoPercent, Type: "percent", Value: value(10)},
				{Code: PromoFixed, Type: "fixed", Value: value(50000), MaxUses: count(5)},
			},
		},
		theatre(now),
		stadium(now),
		{
			Ref: RefSeries, Status: "published", Kind: "recurring", Title: "Jazz Tuesdays", Slug: "jazz-tuesdays",
			Description: "A jazz quartet every week, tables in front of the stage.",
			City:        "Moscow", Venue: "Blue Note Cellar", Address: "Pokrovka 12, Moscow",
			Latitude: coord(55.7592), Longitude: coord(37.6461), Timezone: "Europe/Moscow",
			Genres: []catalogimport.ImportGenre{{ID: "jazz", Name: "Jazz", Slug: "jazz"}},
			Occurrences: []catalogimport.ImportOccurrence{
				{Ref: "week-1", StartsAt: at(now, 7, 20), EndsAt: at(now, 7, 22)},
				{Ref: "week-2", StartsAt: at(now, 14, 20), EndsAt: at(now, 14, 22)},
				{Ref: "week-3", StartsAt: at(now, 21, 20), EndsAt: at(now, 21, 22), Title: "Jazz Tuesdays: guest night"},
				{Ref: "week-4", StartsAt: at(now, 28, 20), EndsAt: at(now, 28, 22)},
			},
			Tiers: []catalogimport.ImportTier{
				gaTier("entry", "Entry", 120000, 80),
				{Ref: "table-for-two", Name: "Table for two", Price: price(300000), Capacity: count(10), PersonsIncluded: count(2)},
			},
		},
		{
			Ref: RefFree, Status: "published", Title: "Open lecture: how a theatre works", Slug: "open-lecture",
			City: "Moscow", Venue: "Small Theatre Foyer", StartsAt: at(now, 10, 18), EndsAt: at(now, 10, 20),
			Timezone: "Europe/Moscow",
			Tiers:    []catalogimport.ImportTier{gaTier("free-entry", "Free entry", 0, 200)},
		},
		{
			Ref: RefSalesEnded, Status: "published", Title: "Farewell show", Slug: "farewell-show",
			Description: "Online sales have closed; the box office sells what is left.",
			City:        "Saint Petersburg", Venue: "Harbour Hall", StartsAt: at(now, 12, 19), EndsAt: at(now, 12, 22),
			Timezone: "Europe/Moscow", SalesStartAt: salesStarted, SalesEndAt: salesEnded,
			Tiers: []catalogimport.ImportTier{gaTier("standard", "Standard", 180000, 300)},
		},
		{
			Ref: RefPast, Status: "published", Title: "Spring gala", Slug: "spring-gala",
			City: "Moscow", Venue: "Arena Club", StartsAt: at(now, -30, 19), EndsAt: at(now, -30, 23),
			Timezone: "Europe/Moscow",
			Tiers:    []catalogimport.ImportTier{gaTier("standard", "Standard", 200000, 400)},
		},
		{
			Ref: RefDraft, Title: "Secret show (not announced)", Slug: "secret-show",
			City: "Moscow", Venue: "Arena Club", StartsAt: at(now, 60, 20), EndsAt: at(now, 60, 23),
			Timezone: "Europe/Moscow",
			Tiers:    []catalogimport.ImportTier{gaTier("standard", "Standard", 300000, 200)},
		},
	}}
}

// theatre is the seated show: stalls rows A-L x 15 (row A is the VIP tier),
// balcony rows M-P x 12, and a standing area with its own tier: 228 seats.
func theatre(now time.Time) catalogimport.ImportEvent {
	var stalls, balcony []catalogimport.ImportSeatRow
	for i := range 12 {
		r := catalogimport.ImportSeatRow{Row: string(rune('A' + i)), Seats: 15, X: 220, Y: 180 + float64(i)*30, DX: 40}
		if i == 0 {
			r.Tier = "vip"
		}
		stalls = append(stalls, r)
	}
	for i := range 4 {
		balcony = append(balcony, catalogimport.ImportSeatRow{Row: string(rune('M' + i)), Seats: 12, X: 280, Y: 620 + float64(i)*30, DX: 40})
	}
	return catalogimport.ImportEvent{
		Ref: RefTheatre, Status: "published", Title: "Hamlet", Slug: "hamlet",
		Description: "Shakespeare's tragedy in three hours, with one interval.",
		City:        "Moscow", Venue: "Small Theatre", Address: "Teatralnaya Ploshchad 1, Moscow",
		CoverPosterURL: "https://picsum.photos/seed/tix-hamlet/600/900",
		Latitude:       coord(55.7601), Longitude: coord(37.6186),
		StartsAt: at(now, 20, 19), EndsAt: at(now, 20, 22), Timezone: "Europe/Moscow", AgeRestriction: count(12),
		Genres: []catalogimport.ImportGenre{{ID: "drama", Name: "Drama", Slug: "drama"}},
		Tiers: []catalogimport.ImportTier{
			{Ref: "stalls", Name: "Stalls", Price: price(350000), Zone: "stalls", Color: "#1E88E5"},
			{Ref: "vip", Name: "VIP row", Description: "Row A, with a programme and a glass of sparkling wine.", Price: price(700000), Zone: "stalls", Color: "#8E24AA"},
			{Ref: "balcony", Name: "Balcony", Price: price(200000), Zone: "balcony", Color: "#43A047"},
			{Ref: "standing", Name: "Standing", Price: price(80000), Capacity: count(60), Zone: "standing", Color: "#FB8C00"},
		},
		Seating: &catalogimport.ImportSeating{
			Width: 1100, Height: 900,
			Decorations: []byte(`{"stage":{"x":250,"y":40,"width":600,"height":90,"label":"Stage"}}`),
			Zones: []catalogimport.ImportZone{
				{Ref: "stalls", Name: "Stalls", Type: "seated", PrimaryTier: "stalls", Color: "#1E88E5", Rows: stalls,
					Shape: []byte(`{"type":"rect","x":200,"y":160,"width":640,"height":370}`)},
				{Ref: "balcony", Name: "Balcony", Type: "seated", PrimaryTier: "balcony", Color: "#43A047", Rows: balcony,
					Shape: []byte(`{"type":"rect","x":260,"y":600,"width":520,"height":130}`)},
				{Ref: "standing", Name: "Standing area", Type: "standing", Color: "#FB8C00",
					Shape: []byte(`{"type":"rect","x":200,"y":760,"width":640,"height":110}`)},
			},
		},
	}
}

// OtherCatalog is org_other's catalog: one published event.
func OtherCatalog(now time.Time) *catalogimport.CatalogFile {
	return &catalogimport.CatalogFile{Events: []catalogimport.ImportEvent{{
		Ref: RefOther, Status: "published", Title: "Other Festival", Slug: "other-festival",
		City: "Kazan", Venue: "Riverside Park", StartsAt: at(now, 25, 12), EndsAt: at(now, 25, 23),
		Timezone: "Europe/Moscow",
		Tiers:    []catalogimport.ImportTier{gaTier("day-pass", "Day pass", 350000, 2000)},
	}}}
}

// LargeSeatedEvent is a published single event in 30 days with a map of exactly
// seats seats (at least 1): rows of up to 50 in one zone, the first tenth of the
// rows (at least one, when there are two or more) in a premium tier. For
// benchmarks and load tests; import it for any organizer.
func LargeSeatedEvent(ref string, seats int, now time.Time) catalogimport.ImportEvent {
	seats = max(seats, 1)
	nRows := (seats + 49) / 50
	premiumRows := nRows / 10
	if premiumRows == 0 && nRows >= 2 {
		premiumRows = 1
	}
	var rows []catalogimport.ImportSeatRow
	for i := 0; seats > 0; i++ {
		n := min(50, seats)
		r := catalogimport.ImportSeatRow{Row: fmt.Sprintf("R%03d", i+1), Seats: n, X: 10, Y: 10 + float64(i)*12, DX: 12}
		if i < premiumRows {
			r.Tier = "premium"
		}
		rows = append(rows, r)
		seats -= n
	}
	tiers := []catalogimport.ImportTier{{Ref: "standard", Name: "Standard", Price: price(150000), Zone: "hall"}}
	if premiumRows > 0 {
		tiers = append(tiers, catalogimport.ImportTier{Ref: "premium", Name: "Premium", Price: price(400000), Zone: "hall"})
	}
	return catalogimport.ImportEvent{
		Ref: ref, Status: "published", Title: "Large hall " + ref, City: "Moscow", Venue: "Large Hall",
		StartsAt: at(now, 30, 19), EndsAt: at(now, 30, 22), Timezone: "Europe/Moscow",
		Tiers: tiers,
		Seating: &catalogimport.ImportSeating{
			Width: 640, Height: 20 + float64(len(rows))*12,
			Zones: []catalogimport.ImportZone{{Ref: "hall", Name: "Hall", Type: "seated", PrimaryTier: "standard", Rows: rows}},
		},
	}
}
