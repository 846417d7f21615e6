package catalogimport_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"tix/internal/catalogimport"
	"tix/internal/ticketing"
)

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
		{"TitleControlCharacters", func() []map[string]any { e := gaEvent("a"); e["title"] = "Rock\r\nBcc: x"; return one(e) },
			[]string{"events[0].title: must be one line without control characters (found U+000D at byte 4): remove it"}},
		{"TitleBidiOverride", func() []map[string]any { e := gaEvent("a"); e["title"] = "Rock \u202egpj.exe"; return one(e) },
			[]string{"events[0].title: must be one line without control characters (found U+202E at byte 5): remove it"}},
		{"TierNameControlCharacters", func() []map[string]any {
			e := gaEvent("a")
			e["tiers"].([]any)[0].(map[string]any)["name"] = "Floor\x00"
			return one(e)
		}, []string{"events[0].tiers[0].name: must be one line without control characters (found U+0000 at byte 5): remove it"}},
		{"VenueControlCharacters", func() []map[string]any { e := gaEvent("a"); e["venue"] = "Hall\x1b[31m"; return one(e) },
			[]string{"events[0].venue: must be one line without control characters (found U+001B at byte 4): remove it"}},
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
			for i := range catalogimport.MaxSeatsPerEvent/1000 + 1 {
				rows = append(rows, map[string]any{"row": "R" + strconv.Itoa(i), "seats": 1000, "x": 0, "y": i, "dx": 1})
			}
			at(e, "seating", "zones", 0)["rows"] = rows
			at(e, "tiers", 1)["zone"] = "back"
			at(e, "tiers", 1)["capacity"] = 1
			return one(e)
		}, []string{"events[0].seating: more than 50000 seats in one event"}},
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
			for i := range catalogimport.MaxPromoCodesPerEvent + 1 {
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
	err := catalogimport.ImportErrors{{Path: "x", Message: "y"}}.Err()
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
