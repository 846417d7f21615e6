package ticketing

import "time"

// Window is the half-open interval [Start, End); a nil bound is open.
type Window struct{ Start, End *time.Time }

// Contains reports whether t is inside the window.
func (w Window) Contains(t time.Time) bool {
	if w.Start != nil && t.Before(*w.Start) {
		return false
	}
	if w.End != nil && !t.Before(*w.End) {
		return false
	}
	return true
}

// Intersect returns the window inside both w and o.
func (w Window) Intersect(o Window) Window {
	r := w
	if o.Start != nil && (r.Start == nil || o.Start.After(*r.Start)) {
		r.Start = o.Start
	}
	if o.End != nil && (r.End == nil || o.End.Before(*r.End)) {
		r.End = o.End
	}
	return r
}

// SalesWindow is the effective sales window of the event, or of occ when it is not
// nil (contract section 2, AvailabilityResponse): it opens at sales_start_at (or on
// publish when null) and closes at the explicit sales_end_at, or by default when
// the event (occurrence) starts. An explicit close never reaches past the end of
// the event (occurrence): nobody sells a date that is over.
func (e *Event) SalesWindow(occ *Occurrence) Window {
	starts, ends := e.StartsAt, e.EndsAt
	if occ != nil {
		starts, ends = occ.StartsAt, occ.EndsAt
	}
	end := starts
	if e.SalesEndAt != nil {
		end = *e.SalesEndAt
		if end.After(ends) {
			end = ends
		}
	}
	return Window{Start: e.SalesStartAt, End: &end}
}

// occurrenceWindows lists the windows tickets can be sold in: the event's own, or
// one per scheduled occurrence (all of them, or only occurrenceID when given).
func (e *Event) occurrenceWindows(occurrenceID string) []Window {
	if len(e.Occurrences) == 0 {
		return []Window{e.SalesWindow(nil)}
	}
	var ws []Window
	for i := range e.Occurrences {
		o := &e.Occurrences[i]
		if o.Status == OccurrenceCancelled || (occurrenceID != "" && o.ID != occurrenceID) {
			continue
		}
		ws = append(ws, e.SalesWindow(o))
	}
	return ws
}

// IsSalesOpen is the contract's is_sales_open: the event is published and now is
// inside the effective window of the requested occurrence, or, when none is
// requested, of the event or of at least one of its scheduled occurrences.
func (e *Event) IsSalesOpen(occurrenceID string, now time.Time) bool {
	if e.Status != EventPublished {
		return false
	}
	for _, w := range e.occurrenceWindows(occurrenceID) {
		if w.Contains(now) {
			return true
		}
	}
	return false
}

// TierOnSale is the contract's is_on_sale: now is inside the tier's own window
// intersected with the event (occurrence) window. It ignores the event's status;
// combine it with IsSalesOpen.
func (e *Event) TierOnSale(t *Tier, occurrenceID string, now time.Time) bool {
	tw := Window{Start: t.SalesStartAt, End: t.SalesEndAt}
	for _, w := range e.occurrenceWindows(occurrenceID) {
		if tw.Intersect(w).Contains(now) {
			return true
		}
	}
	return false
}

// IsOver reports whether the event (all of it, every occurrence included) has ended.
func (e *Event) IsOver(now time.Time) bool { return !e.EndsAt.After(now) }
