package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"tix/internal/catalogimport"
	"tix/internal/ticketing"
)

// maxCatalogBytes bounds an import file (a 20,000-seat map is about 2 MB).
const maxCatalogBytes = 64 << 20

// eventSummary is one imported (or validated) event as tixctl prints it.
type eventSummary struct {
	ID          string    `json:"id,omitempty"`
	Ref         string    `json:"ref"`
	Slug        *string   `json:"slug"`
	Status      string    `json:"status"`
	Kind        string    `json:"kind"`
	Title       string    `json:"title"`
	StartsAt    time.Time `json:"starts_at"`
	Tiers       int       `json:"tiers"`
	Occurrences int       `json:"occurrences"`
	Zones       int       `json:"zones"`
	Seats       int       `json:"seats"`
	IsFree      bool      `json:"is_free"`
}

type catalogResult struct {
	OrganizerID string         `json:"organizer_id,omitempty"`
	Valid       bool           `json:"valid,omitempty"`
	Events      []eventSummary `json:"events"`
}

func summarize(events []*ticketing.Event, withIDs bool) []eventSummary {
	out := make([]eventSummary, len(events))
	for i, e := range events {
		s := eventSummary{
			Ref: e.Ref, Slug: e.Slug, Status: string(e.Status), Kind: string(e.Kind), Title: e.Title,
			StartsAt: e.StartsAt, Tiers: len(e.Tiers), Occurrences: len(e.Occurrences), Zones: len(e.Zones), IsFree: e.IsFree(),
		}
		if withIDs {
			s.ID = e.ID
		}
		for _, z := range e.Zones {
			s.Seats += z.SeatCount
		}
		out[i] = s
	}
	return out
}

func printSummaries(w io.Writer, list []eventSummary) {
	rows := make([][]string, len(list))
	for i, s := range list {
		slug := "-"
		if s.Slug != nil {
			slug = *s.Slug
		}
		id := s.ID
		if id == "" {
			id = "-"
		}
		rows[i] = []string{id, s.Ref, slug, s.Status, s.Kind, s.StartsAt.Format(time.RFC3339),
			strconv.Itoa(s.Tiers), strconv.Itoa(s.Occurrences), strconv.Itoa(s.Seats), s.Title}
	}
	table(w, []string{"ID", "REF", "SLUG", "STATUS", "KIND", "STARTS", "TIERS", "OCCS", "SEATS", "TITLE"}, rows)
}

// readCatalog reads FILE, or standard input for "-".
func (a *app) readCatalog(args []string) ([]byte, error) {
	if len(args) != 1 {
		return nil, usagef("give exactly one catalog FILE (or - for standard input)")
	}
	var r io.Reader
	if args[0] == "-" {
		r = a.stdin
	} else {
		f, err := os.Open(args[0])
		if err != nil {
			return nil, fmt.Errorf("open catalog: %w", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxCatalogBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	if len(data) > maxCatalogBytes {
		return nil, fmt.Errorf("catalog file is larger than %d MiB", maxCatalogBytes>>20)
	}
	return data, nil
}

func catalogImport(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("catalog import", flag.ContinueOnError)
	org := fs.String("organizer", "", "organizer id")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := required("organizer", *org); err != nil {
		return err
	}
	data, err := a.readCatalog(rest)
	if err != nil {
		return err
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	if _, err := st.Organizers.GetOrganizer(ctx, *org); err != nil {
		return err
	}
	events, err := catalogimport.ParseCatalog(*org, data, a.clock.Now())
	if err != nil {
		return err
	}
	if err := st.Catalog.ImportCatalog(ctx, *org, events); err != nil {
		return err
	}
	res := catalogResult{OrganizerID: *org, Events: summarize(events, true)}
	return a.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "Imported %d events for %s (%s, table %s):\n\n", len(events), *org, a.where(), a.table)
		printSummaries(w, res.Events)
	})
}

func catalogValidate(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("catalog validate", flag.ContinueOnError)
	org := fs.String("organizer", "", "organizer id (only to show the ids the import would give)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	data, err := a.readCatalog(rest)
	if err != nil {
		return err
	}
	owner := *org
	if owner == "" {
		owner = "org_validate"
	}
	events, err := catalogimport.ParseCatalog(owner, data, a.clock.Now())
	if err != nil {
		return err
	}
	res := catalogResult{OrganizerID: *org, Valid: true, Events: summarize(events, *org != "")}
	return a.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "The catalog is valid: %d events. Nothing was written.\n", len(events))
		fmt.Fprintln(w, "It is checked again against the store on import (slugs, what has been sold).")
		fmt.Fprintln(w)
		printSummaries(w, res.Events)
	})
}
