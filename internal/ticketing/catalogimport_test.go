package ticketing_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

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
	events, err := ticketing.ParseCatalog("org_test", data, importNow)
	if err == nil {
		t.Fatalf("ParseCatalog accepted an invalid file and built %d events", len(events))
	}
	if events != nil {
		t.Errorf("events returned with an error")
	}
	if !ticketing.IsCode(err, ticketing.CodeInvalidRequest) {
		t.Errorf("error code = %s, want invalid_request", ticketing.ErrorCode(err))
	}
	list := ticketing.ImportProblems(err)
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
	events, err := ticketing.ParseCatalog("org_test", data, importNow)
	if err != nil {
		t.Fatalf("ParseCatalog: %v", err)
	}
	return events
}

func TestParseCatalog_Rules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		events func() []map[string]any
		want   []string // each must be one of the problems, exactly
	}{
		{"RefRequired", func() []map[string]any { e := gaEvent("x"); delete(e, "ref"); return one(e) },
			[]string{"events[0].ref: required"}},
		{"RefFormat", func() []map[string]any { return one(gaEvent("rock night")) },
			[]string{"events[0].ref: must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-'"}},
		{"RefUniqueInFile", func() []map[string]any { return []map[string]any{gaEvent("a"), gaEvent("a")} },
			[]string{`events[1].ref: duplicate ref "a" (also events[0])`}},
		{"StatusEnum", func() []map[string]any { e := gaEvent("a"); e["status"] = "live"; return one(e) },
			[]string{"events[0].status: must be one of draft, published, cancelled, postponed"}},
		{"KindEnum", func() []map[string]any { e := gaEvent("a"); e["kind"] = "festival"; return one(e) },
			[]string{"events[0].kind: must be one of single, series, recurring"}},
		{"SingleForbidsOccurrences", func() []map[string]any { e := seriesEvent("a"); e["kind"] = "single"; return one(e) },
			[]string{"events[0].occurrences: not allowed for a single event: set kind to series or recurring"}},
		{"SeriesNeedsOccurrences", func() []map[string]any {
			e := gaEvent("a")
			e["kind"] = "series"
			return one(e)
		}, []string{"events[0].occurrences: required: a series event needs at least one occurrence"}},
		{"TitleRequired", func() []map[string]any { e := gaEvent("a"); e["title"] = "  "; return one(e) },
			[]string{"events[0].title: required"}},
		{"TitleLength", func() []map[string]any { e := gaEvent("a"); e["title"] = strings.Repeat("x", 201); return one(e) },
			[]string{"events[0].title: must be at most 200 characters (is 201)"}},
		{"CityAndVenueRequired", func() []map[string]any { e := gaEvent("a"); delete(e, "city"); delete(e, "venue"); return one(e) },
			[]string{"events[0].city: required", "events[0].venue: required"}},
		{"SlugFormat", func() []map[string]any { e := gaEvent("a"); e["slug"] = "Rock_Night"; return one(e) },
			[]string{"events[0].slug: must be 1-100 characters of a-z, 0-9 and '-', not starting or ending with '-'"}},
		{"SlugUniqueInFile", func() []map[string]any {
			a, b := gaEvent("a"), gaEvent("b")
			a["slug"], b["slug"] = "rock", "rock"
			return []map[string]any{a, b}
		}, []string{`events[1].slug: duplicate slug "rock" (also events[0])`}},
		{"CoverURLScheme", func() []map[string]any { e := gaEvent("a"); e["cover_wide_url"] = "ftp://cdn/x.jpg"; return one(e) },
			[]string{"events[0].cover_wide_url: must be an http(s) URL"}},
		{"LatitudeRange", func() []map[string]any { e := gaEvent("a"); e["latitude"], e["longitude"] = 91, 37.6; return one(e) },
			[]string{"events[0].latitude: must be between -90 and 90"}},
		{"LongitudeRange", func() []map[string]any { e := gaEvent("a"); e["latitude"], e["longitude"] = 55.7, -181; return one(e) },
			[]string{"events[0].longitude: must be between -180 and 180"}},
		{"CoordinatesInPairs", func() []map[string]any { e := gaEvent("a"); e["latitude"] = 55.7; return one(e) },
			[]string{"events[0].longitude: required when latitude is given"}},
		{"StartsAtRequired", func() []map[string]any { e := gaEvent("a"); delete(e, "starts_at"); return one(e) },
			[]string{"events[0].starts_at: required"}},
		{"StartsAtRFC3339", func() []map[string]any { e := gaEvent("a"); e["starts_at"] = "2026-09-12 19:00"; return one(e) },
			[]string{"events[0].starts_at: must be an RFC 3339 date-time such as 2026-07-01T19:00:00+03:00"}},
		{"EndsAfterStarts", func() []map[string]any { e := gaEvent("a"); e["ends_at"] = e["starts_at"]; return one(e) },
			[]string{"events[0].ends_at: must be after starts_at"}},
		{"DerivedStartsMustMatch", func() []map[string]any {
			e := seriesEvent("a")
			e["starts_at"] = "2026-10-08T19:00:00+03:00"
			return one(e)
		}, []string{"events[0].starts_at: must be omitted or equal the earliest occurrence start 2026-10-01T16:00:00Z"}},
		{"DerivedEndsMustMatch", func() []map[string]any {
			e := seriesEvent("a")
			e["ends_at"] = "2026-10-01T22:00:00+03:00"
			return one(e)
		}, []string{"events[0].ends_at: must be omitted or equal the latest occurrence end 2026-10-08T19:00:00Z"}},
		{"TimezoneIANA", func() []map[string]any { e := gaEvent("a"); e["timezone"] = "Mars/Olympus"; return one(e) },
			[]string{`events[0].timezone: unknown IANA time zone "Mars/Olympus"`}},
		{"TimezoneNotLocal", func() []map[string]any { e := gaEvent("a"); e["timezone"] = "Local"; return one(e) },
			[]string{`events[0].timezone: unknown IANA time zone "Local"`}},
		{"AgeRestrictionRange", func() []map[string]any { e := gaEvent("a"); e["age_restriction"] = 22; return one(e) },
			[]string{"events[0].age_restriction: must be between 0 and 21"}},
		{"SalesWindowOrder", func() []map[string]any {
			e := gaEvent("a")
			e["sales_start_at"], e["sales_end_at"] = "2026-08-01T00:00:00Z", "2026-07-01T00:00:00Z"
			return one(e)
		}, []string{"events[0].sales_end_at: must be after sales_start_at"}},
		{"CurrencyRUBOnly", func() []map[string]any { e := gaEvent("a"); e["currency"] = "USD"; return one(e) },
			[]string{"events[0].currency: must be RUB (the only currency)"}},
		{"GenreFields", func() []map[string]any {
			e := gaEvent("a")
			e["genres"] = []any{map[string]any{"id": "rock", "name": "Rock"}, map[string]any{"id": "rock"}}
			return one(e)
		}, []string{`events[0].genres[1].id: duplicate genre id "rock" (also genres[0])`, "events[0].genres[1].name: required"}},
		{"SceneFields", func() []map[string]any {
			e := gaEvent("a")
			e["scene"] = map[string]any{"name": "Arena", "logo_url": "arena.png"}
			return one(e)
		}, []string{"events[0].scene.id: required", "events[0].scene.logo_url: must be an http(s) URL"}},
		{"PerformerFields", func() []map[string]any {
			e := gaEvent("a")
			e["performers"] = []any{map[string]any{"type": "Headliner!", "duration_min": 0}}
			return one(e)
		}, []string{
			"events[0].performers[0].name: required",
			"events[0].performers[0].type: must be a lowercase word such as artist, band, dj, speaker",
			"events[0].performers[0].duration_min: must be between 1 and 44640",
		}},
		{"OccurrenceFields", func() []map[string]any {
			e := seriesEvent("a")
			o := at(e, "occurrences", 1)
			o["ref"], o["status"], o["ends_at"] = "w1", "postponed", "2026-10-08T18:00:00+03:00"
			return one(e)
		}, []string{
			`events[0].occurrences[1].ref: duplicate ref "w1" (also occurrences[0])`,
			"events[0].occurrences[1].ends_at: must be after starts_at",
			"events[0].occurrences[1].status: must be scheduled or cancelled",
		}},
		{"TierPriceNonNegative", func() []map[string]any {
			c := gaEvent("c")
			at(c, "tiers", 0)["price"] = -1
			return []map[string]any{gaEvent("a"), gaEvent("b"), c}
		}, []string{"events[2].tiers[0].price: must be >= 0"}},
		{"TierPriceRequired", func() []map[string]any { e := gaEvent("a"); delete(at(e, "tiers", 0), "price"); return one(e) },
			[]string{"events[0].tiers[0].price: required (in kopecks; 0 makes a free tier)"}},
		{"TierRefUnique", func() []map[string]any {
			e := gaEvent("a")
			e["tiers"] = append(e["tiers"].([]any), map[string]any{"ref": "floor", "name": "Again", "price": 1, "capacity": 1})
			return one(e)
		}, []string{`events[0].tiers[1].ref: duplicate ref "floor" (also tiers[0])`}},
		{"GATierNeedsCapacity", func() []map[string]any { e := gaEvent("a"); delete(at(e, "tiers", 0), "capacity"); return one(e) },
			[]string{"events[0].tiers[0].capacity: required for a general-admission or standing tier"}},
		{"CapacityNonNegative", func() []map[string]any { e := gaEvent("a"); at(e, "tiers", 0)["capacity"] = -5; return one(e) },
			[]string{"events[0].tiers[0].capacity: must be >= 0"}},
		{"StandingTierNeedsCapacity", func() []map[string]any { e := seatedEvent("a"); delete(at(e, "tiers", 2), "capacity"); return one(e) },
			[]string{"events[0].tiers[2].capacity: required for a general-admission or standing tier"}},
		{"SeatedTierCapacityIsComputed", func() []map[string]any { e := seatedEvent("a"); at(e, "tiers", 0)["capacity"] = 20; return one(e) },
			[]string{"events[0].tiers[0].capacity: must not be given for a seated tier: its capacity is its number of seats"}},
		{"PersonsIncludedAtLeastOne", func() []map[string]any { e := gaEvent("a"); at(e, "tiers", 0)["persons_included"] = 0; return one(e) },
			[]string{"events[0].tiers[0].persons_included: must be between 1 and 100"}},
		{"TierColor", func() []map[string]any { e := gaEvent("a"); at(e, "tiers", 0)["color"] = "red"; return one(e) },
			[]string{"events[0].tiers[0].color: must be a color like #1E88E5"}},
		{"TierSalesWindow", func() []map[string]any {
			e := gaEvent("a")
			at(e, "tiers", 0)["sales_start_at"] = "2026-08-01T00:00:00Z"
			at(e, "tiers", 0)["sales_end_at"] = "2026-08-01T00:00:00Z"
			return one(e)
		}, []string{"events[0].tiers[0].sales_end_at: must be after sales_start_at"}},
		{"TierZoneWithoutSeating", func() []map[string]any { e := gaEvent("a"); at(e, "tiers", 0)["zone"] = "stalls"; return one(e) },
			[]string{`events[0].tiers[0].zone: event has no seating, so there is no zone "stalls"`}},
		{"TierZoneUnknown", func() []map[string]any { e := seatedEvent("a"); at(e, "tiers", 2)["zone"] = "balcony"; return one(e) },
			[]string{`events[0].tiers[2].zone: no zone with ref "balcony" in seating.zones`}},
		{"SeatingSize", func() []map[string]any { e := seatedEvent("a"); at(e, "seating")["width"] = 0; return one(e) },
			[]string{"events[0].seating.width: must be > 0"}},
		{"SeatingDecorationsObject", func() []map[string]any {
			e := seatedEvent("a")
			at(e, "seating")["decorations"] = []any{1, 2}
			return one(e)
		}, []string{"events[0].seating.decorations: must be an object, not an array (line 8, column 24)"}},
		{"ZoneType", func() []map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 1)["type"] = "vip"
			return one(e)
		},
			[]string{"events[0].seating.zones[1].type: must be seated or standing"}},
		{"ZoneRefUnique", func() []map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 1)["ref"] = "stalls"
			return one(e)
		},
			[]string{`events[0].seating.zones[1].ref: duplicate ref "stalls" (also zones[0])`}},
		{"SeatedZoneNeedsPrimaryTier", func() []map[string]any {
			e := seatedEvent("a")
			delete(at(e, "seating", "zones", 0), "primary_tier")
			return one(e)
		}, []string{"events[0].seating.zones[0].primary_tier: required for a seated zone"}},
		{"PrimaryTierMustBeOfTheZone", func() []map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0)["primary_tier"] = "standing"
			return one(e)
		}, []string{`events[0].seating.zones[0].primary_tier: tier "standing" is in zone "back"; a seat's tier must have "zone": "stalls"`}},
		{"PrimaryTierUnknown", func() []map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0)["primary_tier"] = "gold"
			return one(e)
		}, []string{`events[0].seating.zones[0].primary_tier: no tier with ref "gold"`}},
		{"SeatTierOverrideMustBeOfTheZone", func() []map[string]any {
			e := seatedEvent("a")
			e["tiers"] = append(e["tiers"].([]any), map[string]any{"ref": "ga", "name": "GA", "price": 1, "capacity": 1})
			at(e, "seating", "zones", 0, "rows", 0)["tier"] = "ga"
			return one(e)
		}, []string{
			`events[0].seating.zones[0].rows[0].tier: tier "ga" is a general-admission tier; a seat's tier must have "zone": "stalls"`,
			`events[0].tiers[1]: seated tier has no seats: make it the primary_tier of zone "stalls" or the tier of some of its seats`,
		}},
		{"SeatedZoneNeedsSeats", func() []map[string]any {
			e := seatedEvent("a")
			delete(at(e, "seating", "zones", 0), "rows")
			return one(e)
		}, []string{"events[0].seating.zones[0].seats: a seated zone needs at least one seat (seats or rows)"}},
		{"SeatRefUniqueInEvent", func() []map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0)["seats"] = []any{map[string]any{"ref": "A-3", "x": 1, "y": 1}}
			return one(e)
		}, []string{`events[0].seating.zones[0].rows[0]: duplicate seat ref "A-3" (also events[0].seating.zones[0].seats[0])`}},
		{"SeatFields", func() []map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0)["seats"] = []any{map[string]any{"ref": "bad ref", "y": 1, "tier": "nope"}}
			return one(e)
		}, []string{
			"events[0].seating.zones[0].seats[0].ref: must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-'",
			"events[0].seating.zones[0].seats[0].x: required",
			`events[0].seating.zones[0].seats[0].tier: no tier with ref "nope"`,
		}},
		{"RowGeneratorFields", func() []map[string]any {
			e := seatedEvent("a")
			r := at(e, "seating", "zones", 0, "rows", 1)
			r["row"], r["seats"], r["dx"] = "B row", 0, 0
			at(e, "seating", "zones", 0, "rows", 0)["dx"] = 0
			return one(e)
		}, []string{
			"events[0].seating.zones[0].rows[0].dx: dx or dy must be non-zero, or the seats would overlap",
			"events[0].seating.zones[0].rows[1].row: must be 1-16 characters of A-Z, a-z, 0-9, '.' or '_' (it becomes part of the seat refs)",
			"events[0].seating.zones[0].rows[1].seats: must be between 1 and 1000",
		}},
		{"SeatLimitPerEvent", func() []map[string]any {
			e := seatedEvent("a")
			var rows []any
			for i := range 21 {
				rows = append(rows, map[string]any{"row": "R" + string(rune('a'+i)), "seats": 1000, "x": 0, "y": i, "dx": 1})
			}
			at(e, "seating", "zones", 0)["rows"] = rows
			at(e, "tiers", 1)["zone"] = "back"
			at(e, "tiers", 1)["capacity"] = 1
			return one(e)
		}, []string{"events[0].seating: more than 20000 seats in one event"}},
		{"StandingZoneHasNoSeats", func() []map[string]any {
			e := seatedEvent("a")
			z := at(e, "seating", "zones", 1)
			z["primary_tier"] = "standing"
			z["seats"] = []any{map[string]any{"ref": "S1", "x": 1, "y": 1}}
			return one(e)
		}, []string{
			`events[0].seating.zones[1].primary_tier: only a seated zone has a primary tier; a standing zone sells the tiers whose zone is "back"`,
			"events[0].seating.zones[1].seats: only a seated zone has seats",
		}},
		{"StandingZoneNeedsATier", func() []map[string]any {
			e := seatedEvent("a")
			e["tiers"] = e["tiers"].([]any)[:2]
			return one(e)
		}, []string{`events[0].seating.zones[1]: standing zone "back" has no tier: give a tier "zone": "back" and a capacity`}},
		{"SeatedTierWithoutSeats", func() []map[string]any {
			e := seatedEvent("a")
			delete(at(e, "seating", "zones", 0, "rows", 0), "tier")
			return one(e)
		}, []string{`events[0].tiers[1]: seated tier has no seats: make it the primary_tier of zone "stalls" or the tier of some of its seats`}},
		{"PromoCodeRequired", func() []map[string]any {
			return one(withPromos(gaEvent("a"), map[string]any{"type": "percent", "value": 10}))
		}, []string{"events[0].promo_codes[0].code: required"}},
		{"PromoCodeFormat", func() []map[string]any {
			return one(withPromos(gaEvent("a"), promo("AB", "percent", 10), promo("TEN%OFF", "percent", 10),
				promo(strings.Repeat("X", 33), "percent", 10), promo(" DEMO10", "percent", 10)))
		}, []string{
			"events[0].promo_codes[0].code: must be 3-32 characters of A-Z, a-z, 0-9, '-' or '_'",
			"events[0].promo_codes[1].code: must be 3-32 characters of A-Z, a-z, 0-9, '-' or '_'",
			"events[0].promo_codes[2].code: must be 3-32 characters of A-Z, a-z, 0-9, '-' or '_'",
			"events[0].promo_codes[3].code: must be 3-32 characters of A-Z, a-z, 0-9, '-' or '_'",
		}},
		{"PromoCodeUniqueInEvent", func() []map[string]any {
			return one(withPromos(gaEvent("a"), promo("DEMO10", "percent", 10), promo("DEMO10", "fixed", 100)))
		}, []string{`events[0].promo_codes[1].code: duplicate code "DEMO10" (also promo_codes[0])`}},
		{"PromoCodeUniqueCaseInsensitively", func() []map[string]any {
			return one(withPromos(gaEvent("a"), promo("Demo10", "percent", 10), promo("other", "percent", 5), promo("dEMO10", "fixed", 100)))
		}, []string{`events[0].promo_codes[2].code: duplicate code "dEMO10" (also promo_codes[0] as "Demo10"; codes are case-insensitive)`}},
		{"PromoTypeRequired", func() []map[string]any {
			return one(withPromos(gaEvent("a"), map[string]any{"code": "DEMO10", "value": 10}))
		}, []string{"events[0].promo_codes[0].type: required: percent or fixed"}},
		{"PromoTypeEnum", func() []map[string]any { return one(withPromos(gaEvent("a"), promo("DEMO10", "amount", 10))) },
			[]string{"events[0].promo_codes[0].type: must be percent or fixed"}},
		{"PromoValueRequired", func() []map[string]any {
			return one(withPromos(gaEvent("a"), map[string]any{"code": "DEMO10", "type": "percent"}))
		}, []string{"events[0].promo_codes[0].value: required (a whole percent for a percent code, kopecks for a fixed code)"}},
		{"PromoPercentRange", func() []map[string]any {
			return one(withPromos(gaEvent("a"), promo("ZERO", "percent", 0), promo("TOO-MUCH", "percent", 101), promo("ALL", "percent", 100)))
		}, []string{
			"events[0].promo_codes[0].value: must be between 1 and 100 for a percent code",
			"events[0].promo_codes[1].value: must be between 1 and 100 for a percent code",
		}},
		{"PromoFixedAtLeastOneKopeck", func() []map[string]any {
			return one(withPromos(gaEvent("a"), promo("NOTHING", "fixed", 0), promo("MINUS", "fixed", -500)))
		}, []string{
			"events[0].promo_codes[0].value: must be >= 1 (kopecks) for a fixed code",
			"events[0].promo_codes[1].value: must be >= 1 (kopecks) for a fixed code",
		}},
		{"PromoTimesRFC3339", func() []map[string]any {
			p := promo("DEMO10", "percent", 10)
			p["starts_at"] = "2026-08-01"
			return one(withPromos(gaEvent("a"), p))
		}, []string{"events[0].promo_codes[0].starts_at: must be an RFC 3339 date-time such as 2026-07-01T19:00:00+03:00"}},
		{"PromoEndsAfterStarts", func() []map[string]any {
			p := promo("DEMO10", "percent", 10)
			p["starts_at"], p["ends_at"] = "2026-08-01T00:00:00+03:00", "2026-07-31T21:00:00Z"
			return one(withPromos(gaEvent("a"), p))
		}, []string{"events[0].promo_codes[0].ends_at: must be after starts_at"}},
		{"PromoMaxUsesAtLeastOne", func() []map[string]any {
			p := promo("DEMO10", "percent", 10)
			p["max_uses"] = 0
			return one(withPromos(gaEvent("a"), p))
		}, []string{"events[0].promo_codes[0].max_uses: must be >= 1 (omit it for unlimited uses)"}},
		{"PromoTierUnknown", func() []map[string]any {
			p := promo("DEMO10", "percent", 10)
			p["tiers"] = []any{"floor", "balcony", ""}
			return one(withPromos(gaEvent("a"), p))
		}, []string{
			`events[0].promo_codes[0].tiers[1]: no tier with ref "balcony" in this event's tiers`,
			`events[0].promo_codes[0].tiers[2]: no tier with ref "" in this event's tiers`,
		}},
		{"PromoTierOfAnotherEvent", func() []map[string]any {
			p := promo("DEMO10", "percent", 10)
			p["tiers"] = []any{"vip"}
			return []map[string]any{seatedEvent("a"), withPromos(gaEvent("b"), p)}
		}, []string{`events[1].promo_codes[0].tiers[0]: no tier with ref "vip" in this event's tiers`}},
		{"PromoTierDuplicate", func() []map[string]any {
			p := promo("DEMO10", "percent", 10)
			p["tiers"] = []any{"vip", "stalls", "vip"}
			return one(withPromos(seatedEvent("a"), p))
		}, []string{`events[0].promo_codes[0].tiers[2]: duplicate tier "vip" (also tiers[0])`}},
		{"PromoCodeLimit", func() []map[string]any {
			var promos []map[string]any
			for i := range ticketing.MaxPromoCodesPerEvent + 1 {
				promos = append(promos, promo(fmt.Sprintf("CODE%03d", i), "percent", 10))
			}
			return one(withPromos(gaEvent("a"), promos...))
		}, []string{"events[0].promo_codes: at most 100 promo codes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := problems(t, catalogJSON(t, tc.events()...))
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("missing problem\n  want: %s\n  got:\n    %s", w, strings.Join(got, "\n    "))
				}
			}
		})
	}
}

func one(e map[string]any) []map[string]any { return []map[string]any{e} }

func TestParseCatalog_JSONProblems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		file string
		want []string
	}{
		{"EmptyFile", "  \n", []string{`file is empty: expected a JSON object {"events": [...]}`}},
		{"EventsRequired", `{}`, []string{`events: required: the file is {"events": [...]}`}},
		{"EventsNotEmpty", `{"events": []}`, []string{"events: must list at least one event"}},
		{"TopLevelObject", `[1]`, []string{"must be an object, not an array (line 1, column 1)"}},
		{"TopLevelNull", `null`, []string{`events: required: the file is {"events": [...]}`}},
		{"SyntaxErrorHasLineAndColumn", "{\"events\": [\n  {\"ref\": \"a\",}\n]}",
			[]string{"events[0]: invalid JSON: invalid character '}' looking for beginning of object key string (line 2, column 15)"}},
		{"UnexpectedEnd", "{\"events\": [\n  {\"ref\": \"a\"",
			[]string{"events[0]: invalid JSON: unexpected end of file (line 2, column 14)"}},
		{"TrailingData", `{"events": [{"ref": "a"}]} {}`, []string{"unexpected data after the top-level object (line 1, column 28)"}},
		{"UnknownFieldWithSuggestion", "{\"events\": [{\"ref\": \"a\", \"titel\": \"x\"}]}",
			[]string{`events[0].titel: unknown field (did you mean "title"?) (line 1, column 26)`, "events[0].title: required"}},
		{"UnknownFieldDeep", `{"events": [{"ref": "a", "tiers": [{"ref": "t", "name": "T", "prise": 1}]}]}`,
			[]string{`events[0].tiers[0].prise: unknown field (did you mean "price"?) (line 1, column 62)`}},
		{"UnknownTopLevelField", `{"events": [], "venues": []}`,
			[]string{"venues: unknown field (line 1, column 16)"}},
		{"PromoCodesBelongToEvents", `{"events": [], "promo_codes": []}`,
			[]string{"promo_codes: unknown field (line 1, column 16)"}},
		{"UnknownPromoField", `{"events": [{"ref": "a", "promo_codes": [{"code": "DEMO10", "max_use": 5}]}]}`,
			[]string{`events[0].promo_codes[0].max_use: unknown field (did you mean "max_uses"?) (line 1, column 61)`}},
		{"PromoValueInteger", `{"events": [{"ref": "a", "promo_codes": [{"code": "DEMO10", "type": "percent", "value": 12.5}]}]}`,
			[]string{"events[0].promo_codes[0].value: must be an integer, not 12.5 (line 1, column 89)"}},
		{"PromoTiersArray", `{"events": [{"ref": "a", "promo_codes": [{"code": "DEMO10", "tiers": "floor"}]}]}`,
			[]string{"events[0].promo_codes[0].tiers: must be an array, not a string (line 1, column 70)"}},
		{"PromoCodesArray", `{"events": [{"ref": "a", "promo_codes": {"code": "DEMO10"}}]}`,
			[]string{"events[0].promo_codes: must be an array, not an object (line 1, column 41)"}},
		{"FieldNamesAreCaseSensitive", `{"Events": []}`,
			[]string{`Events: unknown field (did you mean "events"?) (line 1, column 2)`}},
		{"DuplicateField", `{"events": [{"ref": "a", "ref": "b"}]}`,
			[]string{"events[0].ref: duplicate field (line 1, column 26)"}},
		{"WrongTypeString", `{"events": [{"ref": 12}]}`,
			[]string{"events[0].ref: must be a string, not a number (line 1, column 21)"}},
		{"WrongTypeInteger", `{"events": [{"ref": "a", "tiers": [{"ref": "t", "price": "100"}]}]}`,
			[]string{"events[0].tiers[0].price: must be an integer, not a string (line 1, column 58)"}},
		{"FractionalPrice", `{"events": [{"ref": "a", "tiers": [{"ref": "t", "price": 99.5}]}]}`,
			[]string{"events[0].tiers[0].price: must be an integer, not 99.5 (line 1, column 58)"}},
		{"IntegerOutOfRange", `{"events": [{"ref": "a", "tiers": [{"ref": "t", "price": 99999999999999999999}]}]}`,
			[]string{"events[0].tiers[0].price: integer 99999999999999999999 is out of range (line 1, column 58)"}},
		{"WrongTypeArray", `{"events": [{"ref": "a", "tiers": {"ref": "t"}}]}`,
			[]string{"events[0].tiers: must be an array, not an object (line 1, column 35)"}},
		{"NullIsAbsent", `{"events": [{"ref": "a", "title": null, "slug": null, "tiers": null, "scene": null}]}`,
			[]string{"events[0].title: required"}},
		{"WrongTypeElementKeepsGoing", `{"events": ["x", {"ref": 1}]}`,
			[]string{"events[0]: must be an object, not a string (line 1, column 13)", "events[1].ref: must be a string, not a number (line 1, column 26)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := problems(t, []byte(tc.file))
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("missing problem\n  want: %s\n  got:\n    %s", w, strings.Join(got, "\n    "))
				}
			}
		})
	}
}

func TestParseCatalog_WrongTypeIsNotAlsoReportedMissing(t *testing.T) {
	t.Parallel()
	got := problems(t, []byte(`{"events": [{"ref": "a", "title": 5, "city": "M", "venue": "V",
		"starts_at": "2026-09-12T19:00:00Z", "ends_at": "2026-09-12T20:00:00Z"}]}`))
	if len(got) != 1 || !strings.HasPrefix(got[0], "events[0].title: must be a string") {
		t.Errorf("problems = %q, want only the type error of title", got)
	}
}

func TestParseCatalog_NotAnObjectIsOneProblem(t *testing.T) {
	t.Parallel()
	if got := problems(t, []byte(`["events"]`)); len(got) != 1 {
		t.Errorf("problems = %q, want only that the file is not an object", got)
	}
}

func TestParseCatalog_CollectsEveryProblem(t *testing.T) {
	t.Parallel()
	a, b := gaEvent("a"), seatedEvent("b")
	delete(a, "title")
	at(a, "tiers", 0)["price"] = -1
	b["timezone"] = "Nowhere/Town"
	at(b, "seating", "zones", 0)["primary_tier"] = "gold"
	got := problems(t, catalogJSON(t, a, b))
	if len(got) < 4 {
		t.Errorf("got %d problems, want at least 4: %q", len(got), got)
	}
	err := ticketing.ImportErrors{{Path: "x", Message: "y"}}.Err()
	var e *ticketing.Error
	if !ticketingAs(err, &e) || !strings.Contains(e.Message, "x: y") || e.Param != "x" {
		t.Errorf("Err() = %#v, want invalid_request listing x: y", err)
	}
}

func ticketingAs(err error, target **ticketing.Error) bool {
	e, ok := err.(*ticketing.Error)
	if ok {
		*target = e
	}
	return ok
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
		if e.ID != ticketing.CatalogEventID("org_test", "rock-night-2026") || !strings.HasPrefix(e.ID, "evt_") || len(e.ID) != 20 {
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
		if e.Tiers[0].Color != ticketing.Palette[0] || e.Tiers[1].Color != "#FB8C00" {
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
		if standing.Seated || standing.Capacity != 40 || standing.ZoneID != ticketing.CatalogZoneID("org_test", "hamlet", "back") {
			t.Errorf("standing tier = %+v", standing)
		}
		if !e.HasSeating || e.Seating == nil || e.Seating.LayoutID != ticketing.CatalogLayoutID("org_test", "hamlet") {
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
		if w1.ID != ticketing.CatalogSeatID("org_test", "hamlet", "stalls", "W-1") || len(w1.ID) != 15 {
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
	wantIDs := []string{ticketing.CatalogTierID("org_test", "a", "standing"), ticketing.CatalogTierID("org_test", "a", "vip")}
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
	other, err := ticketing.ParseCatalog("org_other", catalogJSON(t, withPromos(seatedEvent("a"), summer)), importNow)
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
	again, err := ticketing.ParseCatalog("org_test", data, importNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	other, err := ticketing.ParseCatalog("org_other", data, importNow)
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
	if tier, zone := ticketing.CatalogTierID("o", "e", "x"), ticketing.CatalogZoneID("o", "e", "x"); tier[5:] == zone[5:] {
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
	if got.Status != ticketing.EventDraft || got.Kind != ticketing.KindSingle || got.Timezone != ticketing.DefaultTimezone {
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
	_, err := ticketing.BuildCatalog("org_test", &ticketing.CatalogFile{Events: []ticketing.ImportEvent{{
		Ref: "a", Title: "A", City: "C", Venue: "V", StartsAt: "2026-09-12T19:00:00Z", EndsAt: "2026-09-12T20:00:00Z",
		Tiers: []ticketing.ImportTier{{Ref: "t", Name: "T", Price: &price, Capacity: new(1)}},
	}}}, importNow)
	if got := ticketing.ImportProblems(err); len(got) != 1 || got[0].String() != "events[0].tiers[0].price: must be >= 0" {
		t.Errorf("problems = %v", got)
	}
}

func TestParseCatalog_AllowsMaximumSeats(t *testing.T) {
	t.Parallel()
	e := seatedEvent("a")
	var rows []any
	for i := range 20 {
		rows = append(rows, map[string]any{"row": "R" + string(rune('a'+i)), "seats": 1000, "x": 0, "y": i, "dx": 1, "tier": "vip"})
	}
	at(e, "seating", "zones", 0)["rows"] = rows
	at(e, "tiers", 0)["zone"] = "back"
	at(e, "tiers", 0)["capacity"] = 10
	at(e, "seating", "zones", 0)["primary_tier"] = "vip"
	events := parseOK(t, catalogJSON(t, e))
	if n := len(events[0].Seating.Zones[0].Seats); n != ticketing.MaxSeatsPerEvent {
		t.Errorf("seats = %d, want %d", n, ticketing.MaxSeatsPerEvent)
	}
}

func TestCheckReimport(t *testing.T) {
	t.Parallel()
	build := func(e map[string]any) *ticketing.Event {
		t.Helper()
		return parseOK(t, catalogJSON(t, e))[0]
	}
	seatID := func(e *ticketing.Event, label string) string {
		for _, z := range e.Seating.Zones {
			for _, s := range z.Seats {
				if s.Label == label {
					return s.ID
				}
			}
		}
		t.Fatalf("no seat %s", label)
		return ""
	}
	ga, seated, series := build(gaEvent("a")), build(seatedEvent("a")), build(seriesEvent("a"))
	withCodes := build(withPromos(gaEvent("a"), promo("DEMO10", "percent", 10)))
	floor := ga.Tiers[0].ID
	stallsTier, vipTier := seated.Tiers[0].ID, seated.Tiers[1].ID
	w2 := series.Occurrences[1].ID
	sold := func(occ, id string, n int) *ticketing.Stock {
		return &ticketing.Stock{Sold: map[ticketing.StockKey]int{{Occurrence: occ, ID: id}: n}}
	}
	seat := func(id, tier, status string, until time.Time) *ticketing.Stock {
		return &ticketing.Stock{Seats: map[ticketing.StockKey]ticketing.SeatState{
			{Occurrence: ticketing.NoOccurrence, ID: id}: {TierID: tier, Status: status, Until: until},
		}}
	}
	cases := []struct {
		name    string
		old     *ticketing.Event
		updated func() map[string]any
		env     ticketing.Environment
		stock   *ticketing.Stock
		want    []string
	}{
		{"TierWithSalesCannotBeRemoved", ga, func() map[string]any {
			e := gaEvent("a")
			at(e, "tiers", 0)["ref"] = "balcony"
			return e
		}, ticketing.EnvTest, sold("-", floor, 3),
			[]string{`events[0].tiers: tier "floor" (` + floor + `) has 3 units or seats taken in test and cannot be removed`}},
		{"CapacityNotBelowSold", ga, func() map[string]any {
			e := gaEvent("a")
			at(e, "tiers", 0)["capacity"] = 2
			return e
		}, ticketing.EnvLive, sold("-", floor, 3),
			[]string{"events[0].tiers[0].capacity: must be >= 3: 3 units are sold in live"}},
		{"CapacityEqualToSoldIsFine", ga, func() map[string]any {
			e := gaEvent("a")
			at(e, "tiers", 0)["capacity"] = 3
			return e
		}, ticketing.EnvLive, sold("-", floor, 3), nil},
		{"SoldSeatCannotBeRemoved", seated, func() map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0, "rows", 1)["seats"] = 9
			return e
		}, ticketing.EnvTest, seat(seatID(seated, "B-10"), stallsTier, ticketing.SeatSold, time.Time{}),
			[]string{"events[0].seating: 1 taken seats in test cannot be removed: B-10 (sold)"}},
		{"HeldSeatCannotBeRemoved", seated, func() map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0, "rows", 1)["seats"] = 9
			return e
		}, ticketing.EnvTest, seat(seatID(seated, "B-10"), stallsTier, ticketing.SeatHeld, importNow.Add(time.Minute)),
			[]string{"events[0].seating: 1 taken seats in test cannot be removed: B-10 (held)"}},
		{"ExpiredHoldDoesNotCount", seated, func() map[string]any {
			e := seatedEvent("a")
			at(e, "seating", "zones", 0, "rows", 1)["seats"] = 9
			return e
		}, ticketing.EnvTest, seat(seatID(seated, "B-10"), stallsTier, ticketing.SeatReserved, importNow.Add(-time.Minute)), nil},
		{"TakenSeatCannotChangeTier", seated, func() map[string]any {
			e := seatedEvent("a")
			delete(at(e, "seating", "zones", 0, "rows", 0), "tier")
			at(e, "seating", "zones", 0, "rows", 1)["tier"] = "vip"
			return e
		}, ticketing.EnvTest, seat(seatID(seated, "A-2"), vipTier, ticketing.SeatSold, time.Time{}),
			[]string{`events[0].seating: 1 taken seats in test cannot move to another tier: A-2 (sold as "vip" (` + vipTier + `))`}},
		{"SeatedTierWithTakenSeatsCannotBeRemoved", seated, func() map[string]any {
			e := seatedEvent("a")
			e["tiers"] = []any{at(e, "tiers", 0), at(e, "tiers", 2)}
			delete(at(e, "seating", "zones", 0, "rows", 0), "tier")
			return e
		}, ticketing.EnvLive, seat(seatID(seated, "A-2"), vipTier, ticketing.SeatReserved, importNow.Add(time.Minute)),
			[]string{`events[0].tiers: tier "vip" (` + vipTier + `) has 1 units or seats taken in live and cannot be removed`}},
		{"OccurrenceWithSalesCannotBeRemoved", series, func() map[string]any {
			e := seriesEvent("a")
			e["occurrences"] = e["occurrences"].([]any)[:1]
			return e
		}, ticketing.EnvTest, sold(w2, series.Tiers[0].ID, 1),
			[]string{`events[0].occurrences: occurrence "w2" (` + w2 + `) has 1 units or seats taken in test and cannot be removed (set its status to cancelled instead)`}},
		{"OccurrenceWithSalesCanBeCancelled", series, func() map[string]any {
			e := seriesEvent("a")
			at(e, "occurrences", 1)["status"] = "cancelled"
			return e
		}, ticketing.EnvTest, sold(w2, series.Tiers[0].ID, 1), nil},
		{"CapacityPerOccurrence", series, func() map[string]any {
			e := seriesEvent("a")
			at(e, "tiers", 0)["capacity"] = 4
			return e
		}, ticketing.EnvTest, sold(w2, series.Tiers[0].ID, 5),
			[]string{`events[0].tiers[0].capacity: must be >= 5: 5 units are sold in test for occurrence "w2" (` + w2 + `)`}},
		{"SingleWithSalesCannotGainOccurrences", ga, func() map[string]any { return seriesEvent("a") },
			ticketing.EnvTest, sold("-", floor, 1),
			[]string{"events[0].kind: the event has 1 units or seats taken in test as a single event and cannot be given occurrences"}},
		{"PromoCodesAreReplacedFreely", withCodes, func() map[string]any {
			return withPromos(gaEvent("a"), promo("OTHER", "fixed", 100))
		}, ticketing.EnvLive, sold("-", floor, 3), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			updated := parseOK(t, catalogJSON(t, tc.updated()))[0]
			got := ticketing.CheckReimport("events[0]", tc.old, updated, tc.env, tc.stock, importNow)
			var lines []string
			for _, p := range got {
				lines = append(lines, p.String())
			}
			if !slices.Equal(lines, tc.want) {
				t.Errorf("problems:\n  got  %q\n  want %q", lines, tc.want)
			}
		})
	}
	t.Run("NewEventIsNotChecked", func(t *testing.T) {
		if got := ticketing.CheckReimport("events[0]", nil, ga, ticketing.EnvTest, sold("-", floor, 9), importNow); got != nil {
			t.Errorf("got %v", got)
		}
	})
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
