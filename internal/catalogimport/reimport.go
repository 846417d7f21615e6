package catalogimport

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"tix/internal/ticketing"
)

// CheckReimport lists what replacing old with updated would break in one
// environment's stock: a tier with sales cannot be removed, nor its capacity go
// below the units sold; a seat that is sold, reserved or held cannot be removed,
// nor move to another tier; an occurrence with sales cannot be removed. path
// names updated in the import file (events[3]). Expired holds and reservations
// do not count.
func CheckReimport(path string, old, updated *ticketing.Event, env ticketing.Environment, stock *ticketing.Stock, now time.Time) ImportErrors {
	if old == nil || stock == nil {
		return nil
	}
	r := newReimport(path, old, updated, env)
	r.countSold(stock.Sold)
	r.countSeats(stock.Seats, now)
	r.reportRemoved()
	r.reportCapacities()
	r.reportShards(stock.Shards)
	r.reportPromos(stock.Promos)
	r.reportSeats()
	return r.errs
}

// reimport gathers, for CheckReimport, what the stock of one environment has
// taken in the parts of old that updated removes or changes.
type reimport struct {
	path         string
	old, updated *ticketing.Event
	env          ticketing.Environment
	errs         ImportErrors

	newOccs      map[string]bool   // occurrence keys of updated
	newTiers     map[string]int    // tier id -> index in updated.Tiers
	newSeats     map[string]string // seat id -> effective tier id in updated
	oldLabels    map[string]string // seat id -> label in old
	removedOccs  map[string]int    // occurrence id -> units and seats taken
	removedTiers map[string]int    // tier id -> units and seats taken
	maxSold      map[string]int    // tier id -> most units sold in one occurrence
	maxOcc       map[string]string // tier id -> that occurrence
	removedSeats []string
	movedSeats   []string
}

func newReimport(path string, old, updated *ticketing.Event, env ticketing.Environment) *reimport {
	r := &reimport{
		path: path, old: old, updated: updated, env: env,
		newOccs: map[string]bool{}, newTiers: map[string]int{}, newSeats: map[string]string{}, oldLabels: map[string]string{},
		removedOccs: map[string]int{}, removedTiers: map[string]int{}, maxSold: map[string]int{}, maxOcc: map[string]string{},
	}
	for _, k := range updated.OccurrenceKeys() {
		r.newOccs[k] = true
	}
	for j, t := range updated.Tiers {
		r.newTiers[t.ID] = j
	}
	if updated.Seating != nil {
		for _, z := range updated.Seating.Zones {
			for _, s := range z.Seats {
				tier := s.TierID
				if tier == "" {
					tier = z.PrimaryTierID
				}
				r.newSeats[s.ID] = tier
			}
		}
	}
	if old.Seating != nil {
		for _, z := range old.Seating.Zones {
			for _, s := range z.Seats {
				r.oldLabels[s.ID] = s.Label
			}
		}
	}
	return r
}

func (r *reimport) add(p, format string, args ...any) {
	r.errs = append(r.errs, ImportError{Path: p, Message: fmt.Sprintf(format, args...)})
}

func (r *reimport) occName(id string) string {
	if o, ok := r.old.Occurrence(id); ok {
		return fmt.Sprintf("%q (%s)", o.Ref, id)
	}
	return id
}

func (r *reimport) tierName(id string) string {
	if t, ok := r.old.Tier(id); ok {
		return fmt.Sprintf("%q (%s)", t.Ref, id)
	}
	return id
}

func (r *reimport) seatLabel(id string) string {
	if l, ok := r.oldLabels[id]; ok {
		return l
	}
	return id
}

// countSold sorts the units sold of general-admission and standing tiers into
// removed occurrences, removed tiers and the most sold per kept tier.
func (r *reimport) countSold(sold map[ticketing.StockKey]int) {
	for k, n := range sold {
		if n <= 0 {
			continue
		}
		if !r.newOccs[k.Occurrence] {
			r.removedOccs[k.Occurrence] += n
			continue
		}
		if _, ok := r.newTiers[k.ID]; !ok {
			r.removedTiers[k.ID] += n
			continue
		}
		if n > r.maxSold[k.ID] || (n == r.maxSold[k.ID] && k.Occurrence < r.maxOcc[k.ID]) {
			r.maxSold[k.ID], r.maxOcc[k.ID] = n, k.Occurrence
		}
	}
}

// countSeats sorts the seats taken at now into removed occurrences, removed
// tiers, removed seats and seats moved to another tier.
func (r *reimport) countSeats(seats map[ticketing.StockKey]ticketing.SeatState, now time.Time) {
	for k, st := range seats {
		if !st.Taken(now) {
			continue
		}
		if !r.newOccs[k.Occurrence] {
			r.removedOccs[k.Occurrence]++
			continue
		}
		if _, ok := r.newTiers[st.TierID]; !ok && st.TierID != "" {
			r.removedTiers[st.TierID]++
			continue
		}
		tier, ok := r.newSeats[k.ID]
		switch {
		case !ok:
			r.removedSeats = append(r.removedSeats, fmt.Sprintf("%s (%s)", r.seatLabel(k.ID), st.Status))
		case st.TierID != "" && tier != st.TierID:
			r.movedSeats = append(r.movedSeats, fmt.Sprintf("%s (%s as %s)", r.seatLabel(k.ID), st.Status, r.tierName(st.TierID)))
		}
	}
}

// reportRemoved reports removed occurrences and tiers that have something taken.
func (r *reimport) reportRemoved() {
	for _, id := range sortedKeys(r.removedOccs) {
		if id == ticketing.NoOccurrence {
			r.add(r.path+".kind", "the event has %d units or seats taken in %s as a single event and cannot be given occurrences", r.removedOccs[id], r.env)
			continue
		}
		r.add(r.path+".occurrences", "occurrence %s has %d units or seats taken in %s and cannot be removed (set its status to cancelled instead)", r.occName(id), r.removedOccs[id], r.env)
	}
	for _, id := range sortedKeys(r.removedTiers) {
		r.add(r.path+".tiers", "tier %s has %d units or seats taken in %s and cannot be removed", r.tierName(id), r.removedTiers[id], r.env)
	}
}

// reportCapacities reports kept tiers whose new capacity or seating cannot
// hold the units sold.
func (r *reimport) reportCapacities() {
	for _, id := range sortedKeys(r.maxSold) {
		j := r.newTiers[id]
		t := r.updated.Tiers[j]
		sold := r.maxSold[id]
		where := ""
		if occ := r.maxOcc[id]; occ != ticketing.NoOccurrence {
			where = " for occurrence " + r.occName(occ)
		}
		wasSeated := false
		if ot, ok := r.old.Tier(id); ok {
			wasSeated = ot.Seated
		}
		switch {
		case t.Seated && wasSeated:
			// A seated tier's sales are its seats, checked below.
		case t.Seated:
			r.add(fmt.Sprintf("%s.tiers[%d].zone", r.path, j), "the tier has %d units sold in %s%s as general admission and cannot become seated", sold, r.env, where)
		case t.Capacity < sold:
			r.add(fmt.Sprintf("%s.tiers[%d].capacity", r.path, j), "must be >= %d: %d units are sold in %s%s", sold, sold, r.env, where)
		}
	}
}

// reportShards reports kept general-admission tiers whose new capacity holds
// the units sold in total but not in one of the stock shards they were sold
// from: each shard's share of the capacity (ticketing.TierShardCaps) must still
// hold what it has sold, or the other shards would sell past the capacity.
func (r *reimport) reportShards(shards map[ticketing.StockKey]map[int]int) {
	need := map[string]int{}
	for k, sold := range shards {
		j, ok := r.newTiers[k.ID]
		if !ok || r.updated.Tiers[j].Seated || !r.newOccs[k.Occurrence] {
			continue
		}
		t := r.updated.Tiers[j]
		if t.Capacity < r.maxSold[k.ID] {
			continue // reported by reportCapacities
		}
		if c := minShardCapacity(r.old, sold, t.Capacity); c > t.Capacity && c > need[k.ID] {
			need[k.ID] = c
		}
	}
	for _, id := range sortedKeys(need) {
		j := r.newTiers[id]
		r.add(fmt.Sprintf("%s.tiers[%d].capacity", r.path, j),
			"must be >= %d: the units sold in %s are spread over the tier's stock shards, and a smaller capacity would leave a shard holding more than its share",
			need[id], r.env)
	}
}

// minShardCapacity is the least capacity from capacity up whose shards each
// hold what sold says they have sold, in the layout of e (the stored event,
// whose created_at the import keeps).
func minShardCapacity(e *ticketing.Event, sold map[int]int, capacity int) int {
	for c := max(capacity, 1); ; c++ {
		caps, fits := ticketing.TierShardCaps(e, c), true
		for sh, n := range sold {
			if n > 0 && (sh >= len(caps) || n > caps[sh]) {
				fits = false
				break
			}
		}
		if fits {
			return c
		}
	}
}

// reportPromos reports limited promo codes whose new max_uses would leave
// a shard of the code's counter (ticketing.PromoShardCaps) holding more
// uses than its part: the other shards would then let the code be used
// past its limit.
func (r *reimport) reportPromos(uses map[string]map[int]int) {
	for i, p := range r.updated.Promos {
		used := uses[p.Code]
		if p.MaxUses <= 0 || ticketing.PromoShardsFit(r.old, p.MaxUses, used) {
			continue
		}
		least := p.MaxUses
		for !ticketing.PromoShardsFit(r.old, least, used) {
			least++
		}
		r.add(fmt.Sprintf("%s.promo_codes[%d].max_uses", r.path, i),
			"must be >= %d: the code's uses in %s are spread over the shards of its counter, and a lower limit would leave a shard holding more than its share",
			least, r.env)
	}
}

// reportSeats reports taken seats that would be removed or moved.
func (r *reimport) reportSeats() {
	if len(r.removedSeats) > 0 {
		r.add(r.path+".seating", "%d taken seats in %s cannot be removed: %s", len(r.removedSeats), r.env, listSome(r.removedSeats))
	}
	if len(r.movedSeats) > 0 {
		r.add(r.path+".seating", "%d taken seats in %s cannot move to another tier: %s", len(r.movedSeats), r.env, listSome(r.movedSeats))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// listSome lists up to ten items, sorted, and counts the rest.
func listSome(items []string) string {
	slices.Sort(items)
	if len(items) <= 10 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:10], ", ") + fmt.Sprintf(" and %d more", len(items)-10)
}
