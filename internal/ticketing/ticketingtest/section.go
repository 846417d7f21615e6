package ticketingtest

import (
	"fmt"
	"time"

	"tix/internal/ticketing"
)

// SectionTier is the seated tier of a SectionEvent.
const SectionTier = "tier_section"

// Section is one seated zone of a SectionEvent: Rows rows (R01, R02, ...,
// the first nearest the stage) of PerRow seats numbered from 1, with ids
// <ID>_R<row>_<number>.
type Section struct {
	ID, Name     string
	SortOrder    float64
	Rows, PerRow int
}

// SectionEvent is a published single event of Org whose seated tier
// SectionTier fills the sections, its seats spread over seatBlocks stock
// partitions (0: the one-partition layout).
func SectionEvent(now time.Time, id string, seatBlocks int, sections ...Section) *ticketing.Event {
	e := &ticketing.Event{ID: id, OrganizerID: Org, Ref: id, Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "Section", City: "Moscow", Venue: "Arena", StartsAt: now.Add(72 * time.Hour), EndsAt: now.Add(75 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now, HasSeating: true, SeatBlocks: seatBlocks,
		Seating: &ticketing.Seating{LayoutID: "lay_" + id}}
	total := 0
	for _, s := range sections {
		z := ticketing.Zone{ID: s.ID, Name: s.Name, Type: ticketing.ZoneSeated, SortOrder: s.SortOrder, PrimaryTierID: SectionTier}
		for r := 1; r <= s.Rows; r++ {
			row := fmt.Sprintf("R%02d", r)
			for n := 1; n <= s.PerRow; n++ {
				num := n
				z.Seats = append(z.Seats, ticketing.Seat{ID: fmt.Sprintf("%s_%s_%d", s.ID, row, n), Label: fmt.Sprintf("%s %s-%d", s.Name, row, n),
					Row: &row, Number: &num, X: float64(n), Y: float64(r)})
			}
		}
		total += len(z.Seats)
		e.Seating.Zones = append(e.Seating.Zones, z)
		e.Zones = append(e.Zones, ticketing.ZoneSummary{ID: s.ID, Name: s.Name, Type: ticketing.ZoneSeated, PrimaryTierID: SectionTier, SeatCount: len(z.Seats)})
	}
	e.Tiers = []ticketing.Tier{{ID: SectionTier, Name: "Seats", Price: 250000, Capacity: total, PersonsIncluded: 1, ZoneID: sections[0].ID, Seated: true}}
	return e
}
