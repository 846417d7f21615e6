// Package catalogimport is the catalog import format (docs/catalog-import.md):
// the types an operator's JSON file decodes into, its validation, and the
// build of the domain's events. Ids are derived from the organizer id and the
// file's refs, so importing the same file again updates the same events in
// place.
package catalogimport

import (
	"fmt"
	"strings"
	"time"

	"tix/internal/ticketing"
)

// ParseCatalog reads, validates and builds an import file for organizerID. The
// error, if any, is an invalid_request *ticketing.Error listing every problem (see
// ImportProblems); no events are returned then. now becomes CreatedAt/UpdatedAt.
func ParseCatalog(organizerID string, data []byte, now time.Time) ([]*ticketing.Event, error) {
	var f CatalogFile
	errs, bad, fatal := decodeCatalogFile(data, &f)
	if fatal {
		return nil, errs.Err()
	}
	return buildCatalog(organizerID, &f, now, errs, bad)
}

// BuildCatalog validates a catalog built in Go (demo data, tests) and builds its
// events, exactly as ParseCatalog does for a file.
func BuildCatalog(organizerID string, f *CatalogFile, now time.Time) ([]*ticketing.Event, error) {
	return buildCatalog(organizerID, f, now, nil, map[string]bool{})
}

func buildCatalog(org string, f *CatalogFile, now time.Time, errs ImportErrors, bad map[string]bool) ([]*ticketing.Event, error) {
	if org == "" {
		return nil, ticketing.Invalid("organizer", "organizer id is required")
	}
	b := &catalogBuilder{org: org, now: now, errs: errs, bad: bad, locations: map[string]bool{}}
	if f.Events == nil {
		b.add("events", "required: the file is {\"events\": [...]}")
	} else if len(f.Events) == 0 {
		b.add("events", "must list at least one event")
	}
	refs := map[string]int{}
	slugs := map[string]int{}
	var events []*ticketing.Event
	for i := range f.Events {
		in := &f.Events[i]
		path := fmt.Sprintf("events[%d]", i)
		if in.Ref != "" {
			if j, dup := refs[in.Ref]; dup {
				b.add(path+".ref", "duplicate ref %q (also events[%d])", in.Ref, j)
			} else {
				refs[in.Ref] = i
			}
		}
		if in.Slug != "" {
			if j, dup := slugs[in.Slug]; dup {
				b.add(path+".slug", "duplicate slug %q (also events[%d])", in.Slug, j)
			} else {
				slugs[in.Slug] = i
			}
		}
		events = append(events, b.event(path, in))
	}
	if len(b.errs) > 0 {
		return nil, b.errs.Err()
	}
	return events, nil
}

type catalogBuilder struct {
	org       string
	now       time.Time
	errs      ImportErrors
	bad       map[string]bool // paths that did not decode; nothing more is said of them
	locations map[string]bool // timezone names already checked
}

// add records a problem unless the path (or a parent) already failed to decode.
func (b *catalogBuilder) add(path, format string, args ...any) {
	for p := path; ; {
		if b.bad[p] {
			return
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			if b.bad[""] { // the whole file was not an object
				return
			}
			break
		}
		p = p[:i]
	}
	b.errs = append(b.errs, ImportError{Path: path, Message: fmt.Sprintf(format, args...)})
}
