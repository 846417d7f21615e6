package catalogimport

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"tix/internal/ticketing"
)

// seatCounts is what the zones of one event's map share: seat refs and ids are
// unique across zones, seats count towards their tiers' capacities, and the
// event has at most MaxSeatsPerEvent seats.
type seatCounts struct {
	tierIndex     map[string]int    // tier ref -> index in the event's tiers
	standingTiers map[string]bool   // zone ref -> some tier names the zone
	seatsOfTier   map[string]int    // tier ref -> seats
	seatRefs      map[string]string // seat ref -> path where first seen
	seatIDs       map[string]bool
	total         int
	tooMany       bool
}

func newSeatCounts(in *ImportEvent) *seatCounts {
	c := &seatCounts{
		tierIndex: map[string]int{}, standingTiers: map[string]bool{},
		seatsOfTier: map[string]int{}, seatRefs: map[string]string{}, seatIDs: map[string]bool{},
	}
	for i, t := range in.Tiers {
		if _, dup := c.tierIndex[t.Ref]; !dup && t.Ref != "" {
			c.tierIndex[t.Ref] = i
		}
		if t.Zone != "" {
			c.standingTiers[t.Zone] = true
		}
	}
	return c
}

// seating builds the map: zones, seats (given and generated), the seated tiers'
// capacities and the zone summaries.
func (b *catalogBuilder) seating(path string, in *ImportEvent, e *ticketing.Event) {
	p := path + ".seating"
	st := b.seatingMap(p, in)
	e.HasSeating = true
	e.Seating = st
	counts := newSeatCounts(in)
	zoneRefs := map[string]int{}
	for k := range in.Seating.Zones {
		z := &in.Seating.Zones[k]
		zp := fmt.Sprintf("%s.zones[%d]", p, k)
		b.uniqueRef(zp+".ref", z.Ref, zoneRefs, "zones", k)
		out := b.zone(zp, k, in, z, counts)
		st.Zones = append(st.Zones, out)
		e.Zones = append(e.Zones, ticketing.ZoneSummary{
			ID: out.ID, Name: out.Name, Type: out.Type, PrimaryTierID: out.PrimaryTierID, SeatCount: len(out.Seats),
		})
	}
	b.seatedCapacities(path, in, e, counts.seatsOfTier)
}

// seatingMap checks the map's own fields; the zones are added by the caller.
func (b *catalogBuilder) seatingMap(p string, in *ImportEvent) *ticketing.Seating {
	s := in.Seating
	st := &ticketing.Seating{
		LayoutID: CatalogLayoutID(b.org, in.Ref), Width: s.Width, Height: s.Height,
		BackgroundURL: b.url(p+".background_url", s.BackgroundURL),
		Decorations:   b.jsonObject(p+".decorations", s.Decorations),
		Zones:         []ticketing.Zone{},
	}
	if !(s.Width > 0) {
		b.add(p+".width", "must be > 0")
	}
	if !(s.Height > 0) {
		b.add(p+".height", "must be > 0")
	}
	switch {
	case len(s.Zones) == 0:
		b.add(p+".zones", "must list at least one zone")
	case len(s.Zones) > MaxZonesPerEvent:
		b.add(p+".zones", "at most %d zones", MaxZonesPerEvent)
	}
	return st
}

// zone builds the k-th zone of the map: a seated zone with its seats, or a
// standing zone, which has neither seats nor a primary tier.
func (b *catalogBuilder) zone(zp string, k int, in *ImportEvent, z *ImportZone, counts *seatCounts) ticketing.Zone {
	out := ticketing.Zone{ID: CatalogZoneID(b.org, in.Ref, z.Ref), Ref: z.Ref, Type: ticketing.ZoneType(z.Type), Shape: b.jsonObject(zp+".shape", z.Shape), SortOrder: float64(k)}
	if n := b.line(zp+".name", z.Name, true, 200); n != nil {
		out.Name = *n
	}
	out.Color = b.color(zp+".color", z.Color, k)
	if z.SortOrder != nil {
		out.SortOrder = *z.SortOrder
	}
	switch out.Type {
	case ticketing.ZoneSeated:
		b.seatedZone(zp, in, z, &out, counts)
	case ticketing.ZoneStanding:
		if z.PrimaryTier != "" {
			b.add(zp+".primary_tier", "only a seated zone has a primary tier; a standing zone sells the tiers whose zone is %q", z.Ref)
		}
		if len(z.Seats) > 0 {
			b.add(zp+".seats", "only a seated zone has seats")
		}
		if len(z.Rows) > 0 {
			b.add(zp+".rows", "only a seated zone has seats")
		}
		if !counts.standingTiers[z.Ref] && z.Ref != "" {
			b.add(zp, "standing zone %q has no tier: give a tier \"zone\": %q and a capacity", z.Ref, z.Ref)
		}
	case "":
		b.add(zp+".type", "required: seated or standing")
	default:
		b.add(zp+".type", "must be seated or standing")
	}
	return out
}

// seatedCapacities sets each seated tier's capacity to its number of seats.
func (b *catalogBuilder) seatedCapacities(path string, in *ImportEvent, e *ticketing.Event, seatsOfTier map[string]int) {
	for i := range e.Tiers {
		t := &e.Tiers[i]
		if !t.Seated {
			continue
		}
		t.Capacity = seatsOfTier[t.Ref]
		if t.Capacity == 0 {
			b.add(fmt.Sprintf("%s.tiers[%d]", path, i), "seated tier has no seats: make it the primary_tier of zone %q or the tier of some of its seats", in.Tiers[i].Zone)
		}
	}
}

// zoneSeats builds the seats of one seated zone.
type zoneSeats struct {
	*catalogBuilder
	zp        string
	in        *ImportEvent
	z         *ImportZone
	out       *ticketing.Zone
	counts    *seatCounts
	primaryOK bool // the zone's primary tier exists and is in the zone
}

func (b *catalogBuilder) seatedZone(zp string, in *ImportEvent, z *ImportZone, out *ticketing.Zone, counts *seatCounts) {
	zs := &zoneSeats{catalogBuilder: b, zp: zp, in: in, z: z, out: out, counts: counts}
	if z.PrimaryTier == "" {
		b.add(zp+".primary_tier", "required for a seated zone")
	} else {
		zs.primaryOK = zs.seatTier(zp+".primary_tier", z.PrimaryTier)
		out.PrimaryTierID = CatalogTierID(b.org, in.Ref, z.PrimaryTier)
	}
	if len(z.Seats) == 0 && len(z.Rows) == 0 {
		b.add(zp+".seats", "a seated zone needs at least one seat (seats or rows)")
	}
	for i := range z.Seats {
		zs.listedSeat(fmt.Sprintf("%s.seats[%d]", zp, i), &z.Seats[i])
	}
	for i := range z.Rows {
		zs.row(fmt.Sprintf("%s.rows[%d]", zp, i), &z.Rows[i])
	}
}

// seatTier checks a tier ref used by this zone (primary or override).
func (zs *zoneSeats) seatTier(path, ref string) bool {
	i, ok := zs.counts.tierIndex[ref]
	switch {
	case !ok:
		zs.add(path, "no tier with ref %q", ref)
	case zs.in.Tiers[i].Zone != zs.z.Ref:
		where := "a general-admission tier"
		if zs.in.Tiers[i].Zone != "" {
			where = fmt.Sprintf("in zone %q", zs.in.Tiers[i].Zone)
		}
		zs.add(path, "tier %q is %s; a seat's tier must have \"zone\": %q", ref, where, zs.z.Ref)
	default:
		return true
	}
	return false
}

// listedSeat checks and adds one seat given in the zone's seats.
func (zs *zoneSeats) listedSeat(sp string, s *ImportSeat) {
	okRef := zs.ref(sp+".ref", s.Ref)
	seat := ticketing.Seat{Label: s.Label, Rotation: s.Rotation}
	if seat.Label == "" {
		seat.Label = s.Ref
	} else if len([]rune(seat.Label)) > 64 {
		zs.add(sp+".label", "must be at most 64 characters")
	}
	if s.Row != "" {
		row := s.Row
		if len([]rune(row)) > 32 {
			zs.add(sp+".row", "must be at most 32 characters")
		}
		seat.Row = &row
	}
	if s.Number != nil {
		n := *s.Number
		seat.Number = &n
	}
	if s.X == nil {
		zs.add(sp+".x", "required")
	} else {
		seat.X = *s.X
	}
	if s.Y == nil {
		zs.add(sp+".y", "required")
	} else {
		seat.Y = *s.Y
	}
	okTier := s.Tier == "" || zs.seatTier(sp+".tier", s.Tier)
	if okRef && okTier && (zs.primaryOK || s.Tier != "") {
		zs.addSeat(sp, seat, s.Ref, s.Tier)
	}
}

// row checks one row of the compact generator and adds its seats.
func (zs *zoneSeats) row(rp string, r *ImportSeatRow) {
	okRow := true
	if r.Row == "" {
		zs.add(rp+".row", "required")
		okRow = false
	} else if !rowPattern.MatchString(r.Row) {
		zs.add(rp+".row", "must be 1-16 characters of A-Z, a-z, 0-9, '.' or '_' (it becomes part of the seat refs)")
		okRow = false
	}
	if r.Seats < 1 || r.Seats > MaxSeatsPerRow {
		zs.add(rp+".seats", "must be between 1 and %d", MaxSeatsPerRow)
		okRow = false
	}
	start := 1
	if r.Start != nil {
		start = *r.Start
		if start < 0 || start > 100000 {
			zs.add(rp+".start", "must be between 0 and 100000")
			okRow = false
		}
	}
	if r.Seats > 1 && r.DX == 0 && r.DY == 0 {
		zs.add(rp+".dx", "dx or dy must be non-zero, or the seats would overlap")
	}
	okTier := r.Tier == "" || zs.seatTier(rp+".tier", r.Tier)
	if !okRow || !okTier || !(zs.primaryOK || r.Tier != "") {
		return
	}
	zs.rowSeats(rp, r, start)
}

// rowSeats generates the seats of a valid row.
func (zs *zoneSeats) rowSeats(rp string, r *ImportSeatRow, start int) {
	for j := 0; j < r.Seats && !zs.counts.tooMany; j++ {
		n, row := start+j, r.Row
		ref := r.Row + "-" + strconv.Itoa(n)
		seat := ticketing.Seat{
			Label: ref, Row: &row, Number: &n,
			X: r.X + float64(j)*r.DX, Y: r.Y + float64(j)*r.DY, Rotation: r.Rotation,
		}
		if math.IsInf(seat.X, 0) || math.IsInf(seat.Y, 0) {
			zs.add(rp, "seat positions overflow")
			return
		}
		zs.addSeat(rp, seat, ref, r.Tier)
	}
}

// addSeat adds a checked seat unless the event is full or its ref or id is
// taken, and counts it towards its tier (the override, else the primary).
func (zs *zoneSeats) addSeat(sp string, seat ticketing.Seat, ref, tierRef string) {
	c := zs.counts
	if c.tooMany {
		return
	}
	if c.total >= MaxSeatsPerEvent {
		c.tooMany = true
		zs.add(zs.zp[:strings.LastIndex(zs.zp, ".zones[")], "more than %d seats in one event", MaxSeatsPerEvent)
		return
	}
	c.total++
	if first, dup := c.seatRefs[ref]; dup {
		zs.add(sp, "duplicate seat ref %q (also %s)", ref, first)
		return
	}
	c.seatRefs[ref] = sp
	seat.ID = CatalogSeatID(zs.org, zs.in.Ref, zs.z.Ref, ref)
	if c.seatIDs[seat.ID] {
		zs.add(sp, "seat id collision for ref %q: rename the seat", ref)
		return
	}
	c.seatIDs[seat.ID] = true
	effective := zs.z.PrimaryTier
	if tierRef != "" {
		effective = tierRef
		if tierRef != zs.z.PrimaryTier {
			seat.TierID = CatalogTierID(zs.org, zs.in.Ref, tierRef)
		}
	}
	c.seatsOfTier[effective]++
	zs.out.Seats = append(zs.out.Seats, seat)
}
