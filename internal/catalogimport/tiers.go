package catalogimport

import (
	"fmt"

	"tix/internal/ticketing"
)

// zoneTypes maps the seating's zone refs to their types, for the tiers.
func (b *catalogBuilder) zoneTypes(path string, in *ImportEvent) map[string]ticketing.ZoneType {
	types := map[string]ticketing.ZoneType{}
	if in.Seating == nil {
		return types
	}
	for _, z := range in.Seating.Zones {
		if _, dup := types[z.Ref]; z.Ref != "" && !dup {
			types[z.Ref] = ticketing.ZoneType(z.Type)
		}
	}
	return types
}

func (b *catalogBuilder) tiers(path string, in *ImportEvent, e *ticketing.Event, zoneTypes map[string]ticketing.ZoneType) {
	if len(in.Tiers) > MaxTiersPerEvent {
		b.add(path+".tiers", "at most %d tiers", MaxTiersPerEvent)
	}
	refs := map[string]int{}
	for i, t := range in.Tiers {
		p := fmt.Sprintf("%s.tiers[%d]", path, i)
		b.uniqueRef(p+".ref", t.Ref, refs, "tiers", i)
		out := ticketing.Tier{ID: CatalogTierID(b.org, in.Ref, t.Ref), Ref: t.Ref, PersonsIncluded: 1}
		if n := b.line(p+".name", t.Name, true, 200); n != nil {
			out.Name = *n
		}
		out.Description = b.text(p+".description", t.Description, false, 5000)
		switch {
		case t.Price == nil:
			b.add(p+".price", "required (in kopecks; 0 makes a free tier)")
		case *t.Price < 0:
			b.add(p+".price", "must be >= 0")
		case *t.Price > MaxPrice:
			b.add(p+".price", "must be <= %d", int64(MaxPrice))
		default:
			out.Price = *t.Price
		}
		zoneType, inZone := ticketing.ZoneType(""), t.Zone != ""
		if inZone {
			var ok bool
			zoneType, ok = zoneTypes[t.Zone]
			switch {
			case in.Seating == nil:
				b.add(p+".zone", "event has no seating, so there is no zone %q", t.Zone)
			case !ok:
				b.add(p+".zone", "no zone with ref %q in seating.zones", t.Zone)
			}
			out.ZoneID = CatalogZoneID(b.org, in.Ref, t.Zone)
			out.Seated = zoneType == ticketing.ZoneSeated
		}
		if out.Seated {
			if t.Capacity != nil {
				b.add(p+".capacity", "must not be given for a seated tier: its capacity is its number of seats")
			}
		} else {
			switch {
			case t.Capacity == nil:
				b.add(p+".capacity", "required for a general-admission or standing tier")
			case *t.Capacity < 0:
				b.add(p+".capacity", "must be >= 0")
			case *t.Capacity > MaxTierCapacity:
				b.add(p+".capacity", "must be <= %d", MaxTierCapacity)
			default:
				out.Capacity = *t.Capacity
			}
		}
		if t.PersonsIncluded != nil {
			if n := *t.PersonsIncluded; n < 1 || n > MaxPersonsIncluded {
				b.add(p+".persons_included", "must be between 1 and %d", MaxPersonsIncluded)
			} else {
				out.PersonsIncluded = n
			}
		}
		out.Color = b.color(p+".color", t.Color, i)
		out.SalesStartAt = b.time(p+".sales_start_at", t.SalesStartAt, false)
		out.SalesEndAt = b.time(p+".sales_end_at", t.SalesEndAt, false)
		b.window(p, out.SalesStartAt, out.SalesEndAt, "sales_start_at", "sales_end_at")
		e.Tiers = append(e.Tiers, out)
	}
}
