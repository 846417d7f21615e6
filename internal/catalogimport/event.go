package catalogimport

import (
	"fmt"
	"time"

	"tix/internal/ticketing"
)

func (b *catalogBuilder) event(path string, in *ImportEvent) *ticketing.Event {
	b.ref(path+".ref", in.Ref)
	e := &ticketing.Event{
		ID:          CatalogEventID(b.org, in.Ref),
		OrganizerID: b.org,
		Ref:         in.Ref,
		Status:      ticketing.EventStatus(in.Status),
		Kind:        ticketing.EventKind(in.Kind),
		Currency:    "RUB",
		Genres:      []ticketing.Genre{},
		Performers:  []ticketing.Performer{},
		Occurrences: []ticketing.Occurrence{},
		Tiers:       []ticketing.Tier{},
		Zones:       []ticketing.ZoneSummary{},
		CreatedAt:   b.now,
		UpdatedAt:   b.now,
	}
	if e.Status == "" {
		e.Status = ticketing.EventDraft
	} else if !validStatus(e.Status) {
		b.add(path+".status", "must be one of draft, published, cancelled, postponed")
	}
	if e.Kind == "" {
		e.Kind = ticketing.KindSingle
	}
	if t := b.line(path+".title", in.Title, true, 200); t != nil {
		e.Title = *t
	}
	if in.Slug != "" {
		if !slugPattern.MatchString(in.Slug) {
			b.add(path+".slug", "must be 1-100 characters of a-z, 0-9 and '-', not starting or ending with '-'")
		}
		s := in.Slug
		e.Slug = &s
	}
	e.Description = b.text(path+".description", in.Description, false, 20000)
	if t := b.line(path+".city", in.City, true, 100); t != nil {
		e.City = *t
	}
	if t := b.line(path+".venue", in.Venue, true, 200); t != nil {
		e.Venue = *t
	}
	e.Address = b.text(path+".address", in.Address, false, 500)
	e.CoverURL = b.url(path+".cover_url", in.CoverURL)
	e.CoverWideURL = b.url(path+".cover_wide_url", in.CoverWideURL)
	e.CoverPosterURL = b.url(path+".cover_poster_url", in.CoverPosterURL)
	b.coordinates(path, in, e)
	e.Timezone = b.timezone(path+".timezone", in.Timezone)
	if in.AgeRestriction != nil {
		if a := *in.AgeRestriction; a < 0 || a > 21 {
			b.add(path+".age_restriction", "must be between 0 and 21")
		}
		a := *in.AgeRestriction
		e.AgeRestriction = &a
	}
	e.SalesStartAt = b.time(path+".sales_start_at", in.SalesStartAt, false)
	e.SalesEndAt = b.time(path+".sales_end_at", in.SalesEndAt, false)
	b.window(path, e.SalesStartAt, e.SalesEndAt, "sales_start_at", "sales_end_at")
	if in.Currency != "" && in.Currency != "RUB" {
		b.add(path+".currency", "must be RUB (the only currency)")
	}
	b.genres(path, in, e)
	if in.Scene != nil {
		e.Scene = b.scene(path+".scene", in.Scene)
	}
	b.performers(path, in, e)
	b.occurrences(path, in, e)
	b.schedule(path, in, e)
	zoneTypes := b.zoneTypes(path, in)
	b.tiers(path, in, e, zoneTypes)
	if in.Seating != nil {
		b.seating(path, in, e)
	}
	b.promos(path, in, e)
	return e
}

func validStatus(s ticketing.EventStatus) bool {
	for _, v := range ticketing.EventStatuses {
		if s == v {
			return true
		}
	}
	return false
}

func (b *catalogBuilder) coordinates(path string, in *ImportEvent, e *ticketing.Event) {
	if in.Latitude != nil {
		if v := *in.Latitude; v < -90 || v > 90 {
			b.add(path+".latitude", "must be between -90 and 90")
		}
		v := *in.Latitude
		e.Latitude = &v
	}
	if in.Longitude != nil {
		if v := *in.Longitude; v < -180 || v > 180 {
			b.add(path+".longitude", "must be between -180 and 180")
		}
		v := *in.Longitude
		e.Longitude = &v
	}
	if b.bad[path+".latitude"] || b.bad[path+".longitude"] {
		return
	}
	if in.Latitude != nil && in.Longitude == nil {
		b.add(path+".longitude", "required when latitude is given")
	}
	if in.Latitude == nil && in.Longitude != nil {
		b.add(path+".latitude", "required when longitude is given")
	}
}

func (b *catalogBuilder) genres(path string, in *ImportEvent, e *ticketing.Event) {
	seen := map[string]int{}
	for i, g := range in.Genres {
		p := fmt.Sprintf("%s.genres[%d]", path, i)
		if g.ID == "" {
			b.add(p+".id", "required")
		} else if j, dup := seen[g.ID]; dup {
			b.add(p+".id", "duplicate genre id %q (also genres[%d])", g.ID, j)
		} else {
			seen[g.ID] = i
			b.line(p+".id", g.ID, true, 64)
		}
		out := ticketing.Genre{ID: g.ID}
		if t := b.line(p+".name", g.Name, true, 100); t != nil {
			out.Name = *t
		}
		out.Slug = b.optionalSlug(p+".slug", g.Slug)
		e.Genres = append(e.Genres, out)
	}
	if len(in.Genres) > 20 {
		b.add(path+".genres", "at most 20 genres")
	}
}

func (b *catalogBuilder) scene(path string, in *ImportScene) *ticketing.Scene {
	s := &ticketing.Scene{ID: in.ID}
	b.line(path+".id", in.ID, true, 64)
	if t := b.line(path+".name", in.Name, true, 200); t != nil {
		s.Name = *t
	}
	s.Slug = b.optionalSlug(path+".slug", in.Slug)
	s.LogoURL = b.url(path+".logo_url", in.LogoURL)
	return s
}

func (b *catalogBuilder) performers(path string, in *ImportEvent, e *ticketing.Event) {
	if len(in.Performers) > 50 {
		b.add(path+".performers", "at most 50 performers")
	}
	for i, p := range in.Performers {
		pp := fmt.Sprintf("%s.performers[%d]", path, i)
		out := ticketing.Performer{Type: p.Type}
		if t := b.line(pp+".name", p.Name, true, 200); t != nil {
			out.Name = *t
		}
		out.Slug = b.optionalSlug(pp+".slug", p.Slug)
		out.AvatarURL = b.url(pp+".avatar_url", p.AvatarURL)
		if out.Type == "" {
			out.Type = "artist"
		} else if !performerPattern.MatchString(out.Type) {
			b.add(pp+".type", "must be a lowercase word such as artist, band, dj, speaker")
		}
		out.StartsAt = b.time(pp+".starts_at", p.StartsAt, false)
		if p.DurationMin != nil {
			if d := *p.DurationMin; d <= 0 || d > 24*60*31 {
				b.add(pp+".duration_min", "must be between 1 and 44640")
			}
			d := *p.DurationMin
			out.DurationMin = &d
		}
		e.Performers = append(e.Performers, out)
	}
}

func (b *catalogBuilder) occurrences(path string, in *ImportEvent, e *ticketing.Event) {
	switch e.Kind {
	case ticketing.KindSingle:
		if len(in.Occurrences) > 0 {
			b.add(path+".occurrences", "not allowed for a single event: set kind to series or recurring")
		}
	case ticketing.KindSeries, ticketing.KindRecurring:
		if len(in.Occurrences) == 0 && !b.bad[path+".occurrences"] {
			b.add(path+".occurrences", "required: a %s event needs at least one occurrence", e.Kind)
		}
	default:
		b.add(path+".kind", "must be one of single, series, recurring")
	}
	if len(in.Occurrences) > MaxOccurrencesPerEvent {
		b.add(path+".occurrences", "at most %d occurrences", MaxOccurrencesPerEvent)
	}
	refs := map[string]int{}
	for i, o := range in.Occurrences {
		p := fmt.Sprintf("%s.occurrences[%d]", path, i)
		b.uniqueRef(p+".ref", o.Ref, refs, "occurrences", i)
		out := ticketing.Occurrence{ID: CatalogOccurrenceID(b.org, in.Ref, o.Ref), Ref: o.Ref, Status: o.Status}
		starts := b.time(p+".starts_at", o.StartsAt, true)
		ends := b.time(p+".ends_at", o.EndsAt, true)
		b.window(p, starts, ends, "starts_at", "ends_at")
		if starts != nil {
			out.StartsAt = *starts
		}
		if ends != nil {
			out.EndsAt = *ends
		}
		switch out.Status {
		case "":
			out.Status = ticketing.OccurrenceScheduled
		case ticketing.OccurrenceScheduled, ticketing.OccurrenceCancelled:
		default:
			b.add(p+".status", "must be scheduled or cancelled")
		}
		out.Title = b.line(p+".title", o.Title, false, 200)
		out.Description = b.text(p+".description", o.Description, false, 20000)
		out.CoverURL = b.url(p+".cover_url", o.CoverURL)
		e.Occurrences = append(e.Occurrences, out)
	}
}

// schedule sets the event's start and end: given for a single event, derived
// from the occurrences otherwise (and then, if given, they must match).
func (b *catalogBuilder) schedule(path string, in *ImportEvent, e *ticketing.Event) {
	hasOccurrences := len(in.Occurrences) > 0
	starts := b.time(path+".starts_at", in.StartsAt, !hasOccurrences && e.Kind == ticketing.KindSingle)
	ends := b.time(path+".ends_at", in.EndsAt, !hasOccurrences && e.Kind == ticketing.KindSingle)
	if !hasOccurrences {
		b.window(path, starts, ends, "starts_at", "ends_at")
		if starts != nil {
			e.StartsAt = *starts
		}
		if ends != nil {
			e.EndsAt = *ends
		}
		return
	}
	for i, o := range e.Occurrences {
		if i == 0 || (!o.StartsAt.IsZero() && (e.StartsAt.IsZero() || o.StartsAt.Before(e.StartsAt))) {
			e.StartsAt = o.StartsAt
		}
		if o.EndsAt.After(e.EndsAt) {
			e.EndsAt = o.EndsAt
		}
	}
	if starts != nil && !starts.Equal(e.StartsAt) {
		b.add(path+".starts_at", "must be omitted or equal the earliest occurrence start %s", e.StartsAt.Format(time.RFC3339))
	}
	if ends != nil && !ends.Equal(e.EndsAt) {
		b.add(path+".ends_at", "must be omitted or equal the latest occurrence end %s", e.EndsAt.Format(time.RFC3339))
	}
}
