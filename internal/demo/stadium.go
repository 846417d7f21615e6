package demo

import (
	"fmt"
	"time"

	"tix/internal/catalogimport"
)

// RefStadium is the 50,000-seat stadium match: published, on sale, in ~45 days.
const RefStadium = "cup-final"

// StadiumSeats is how many seats the stadium's map has.
const StadiumSeats = 4 * stadiumSections * stadiumRows * stadiumPerRow

const (
	stadiumSections = 10 // per stand: west, east (the long sides), north, south
	stadiumRows     = 25 // per section, row 1 nearest the pitch
	stadiumPerRow   = 50
)

// stadiumCategories are the price categories, best first, each a zone of the
// map holding its sections: category 1 the long stands' four middle sections,
// 2 the next four of each, 3 their ends, 4 the stands behind the goals.
var stadiumCategories = []struct {
	ref, name, color string
	price            int64
}{
	{"cat-1", "Category 1", "#C62828", 900000},
	{"cat-2", "Category 2", "#EF6C00", 600000},
	{"cat-3", "Category 3", "#1565C0", 350000},
	{"cat-4", "Category 4", "#2E7D32", 200000},
}

// stadiumCategory is the category of section k of a stand.
func stadiumCategory(stand string, k int) int {
	if stand == "N" || stand == "S" {
		return 3
	}
	fromMiddle := k - stadiumSections/2
	if fromMiddle < 0 {
		fromMiddle = -fromMiddle - 1
	}
	return min(fromMiddle/2, 2)
}

// stadium is the seated match: four stands of ten sections of 25 rows of 50
// seats. Each category's zone lists the rows of its sections front row first
// (row 1 of every section, then row 2, ...), so best available fills the
// rows nearest the pitch first. The map is stored compressed in a few items;
// only taken seats ever get an item.
func stadium(now time.Time) catalogimport.ImportEvent {
	zones := make([]catalogimport.ImportZone, len(stadiumCategories))
	var tiers []catalogimport.ImportTier
	for c, cat := range stadiumCategories {
		order := float64(c + 1)
		zones[c] = catalogimport.ImportZone{Ref: cat.ref, Name: cat.name, Type: "seated", PrimaryTier: cat.ref, Color: cat.color, SortOrder: &order}
		tiers = append(tiers, catalogimport.ImportTier{Ref: cat.ref, Name: cat.name, Price: price(cat.price), Zone: cat.ref, Color: cat.color})
	}
	for r := range stadiumRows {
		for _, stand := range []string{"W", "E", "N", "S"} {
			for k := range stadiumSections {
				z := &zones[stadiumCategory(stand, k)]
				z.Rows = append(z.Rows, stadiumRow(stand, k, r))
			}
		}
	}
	return catalogimport.ImportEvent{
		Ref: RefStadium, Status: "published", Title: "Cup Final", Slug: "cup-final",
		Description: "The season's last match, 50,000 seats: choose yours on the map or take the best available.",
		City:        "Moscow", Venue: "Central Stadium", Address: "Luzhnetskaya Naberezhnaya 24, Moscow",
		Latitude: coord(55.7158), Longitude: coord(37.5537),
		StartsAt: at(now, 45, 19), EndsAt: at(now, 45, 22), Timezone: "Europe/Moscow",
		Genres: []catalogimport.ImportGenre{{ID: "football", Name: "Football", Slug: "football"}},
		Tiers:  tiers,
		Seating: &catalogimport.ImportSeating{
			Width: 4000, Height: 4000,
			Decorations: []byte(`{"pitch":{"x":1300,"y":1300,"width":1400,"height":1400,"label":"Pitch"}}`),
			Zones:       zones,
		},
	}
}

// stadiumRow is row r of section k of a stand ("W5.1": west stand, section
// 5, row 1), laid out away from the pitch.
func stadiumRow(stand string, k, r int) catalogimport.ImportSeatRow {
	row := catalogimport.ImportSeatRow{Row: fmt.Sprintf("%s%d.%d", stand, k+1, r+1), Seats: stadiumPerRow, DX: 2.6}
	along, away := 1300+float64(k)*140, float64(r)*16
	switch stand {
	case "W":
		row.X, row.Y = along, 1250-away
	case "E":
		row.X, row.Y = along, 2750+away
	case "N":
		row.X, row.Y, row.DX, row.DY = 1250-away, along, 0, 2.6
	default:
		row.X, row.Y, row.DX, row.DY = 2750+away, along, 0, 2.6
	}
	return row
}
