package catalogimport_test

import (
	"encoding/json"
	"os"
	"testing"

	"tix/internal/catalogimport"
	"tix/internal/ticketing"
)

// FuzzParseCatalog checks that any input either yields a list of problems (and no
// events) or events that hold together: unique ids, computed seated capacities.
// Seeds live in testdata/fuzz/FuzzParseCatalog; run with
// `go test -run '^$' -fuzz FuzzParseCatalog -fuzztime 30s ./internal/catalogimport`.
func FuzzParseCatalog(f *testing.F) {
	if data, err := os.ReadFile("testdata/catalog-small.json"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := catalogimport.ParseCatalog("org_fuzz", data, importNow)
		if err != nil {
			if events != nil {
				t.Fatalf("events returned with an error")
			}
			if !ticketing.IsCode(err, ticketing.CodeInvalidRequest) {
				t.Fatalf("error is not invalid_request: %v", err)
			}
			list := catalogimport.ImportProblems(err)
			if len(list) == 0 {
				t.Fatalf("error without problems: %v", err)
			}
			for _, p := range list {
				if p.Message == "" {
					t.Fatalf("problem without a message at %q", p.Path)
				}
			}
			return
		}
		if len(events) == 0 {
			t.Fatal("no error and no events")
		}
		ids := map[string]bool{}
		unique := func(id string) {
			if id == "" || ids[id] {
				t.Fatalf("id %q empty or not unique", id)
			}
			ids[id] = true
		}
		for _, e := range events {
			unique(e.ID)
			if e.Currency != "RUB" || !e.EndsAt.After(e.StartsAt) || e.OrganizerID != "org_fuzz" {
				t.Fatalf("event %s: currency %q, window %v..%v", e.ID, e.Currency, e.StartsAt, e.EndsAt)
			}
			for _, o := range e.Occurrences {
				unique(o.ID)
			}
			seats := map[string]int{}
			if e.Seating != nil {
				unique(e.Seating.LayoutID)
				for _, z := range e.Seating.Zones {
					unique(z.ID)
					for _, s := range z.Seats {
						unique(s.ID)
						tier := s.TierID
						if tier == "" {
							tier = z.PrimaryTierID
						}
						seats[tier]++
					}
				}
				if len(e.Zones) != len(e.Seating.Zones) || !e.HasSeating {
					t.Fatalf("event %s: zone summaries do not match the map", e.ID)
				}
			}
			for _, tier := range e.Tiers {
				unique(tier.ID)
				if tier.Price < 0 || tier.Capacity < 0 || tier.PersonsIncluded < 1 {
					t.Fatalf("tier %s: price %d capacity %d persons %d", tier.ID, tier.Price, tier.Capacity, tier.PersonsIncluded)
				}
				if tier.Seated && tier.Capacity != seats[tier.ID] {
					t.Fatalf("seated tier %s: capacity %d, seats %d", tier.ID, tier.Capacity, seats[tier.ID])
				}
			}
			if _, err := json.Marshal(e); err != nil {
				t.Fatalf("event %s does not encode: %v", e.ID, err)
			}
		}
	})
}
