package ticketing

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is the catalog import format (docs/catalog-import.md): the types an
// operator's JSON file decodes into, its validation, and the build of the
// domain's events. Ids are derived from the organizer id and the file's refs,
// so importing the same file again updates the same events in place.

// Import limits.
const (
	MaxSeatsPerEvent       = 20000
	MaxSeatsPerRow         = 1000
	MaxTiersPerEvent       = 100
	MaxOccurrencesPerEvent = 1000
	MaxZonesPerEvent       = 100
	MaxTierCapacity        = 1_000_000
	MaxPrice               = 100_000_000_000 // kopecks: one billion rubles
	MaxPersonsIncluded     = 100
	MaxPromoCodesPerEvent  = 100
)

// CatalogFile is the import document: {"events": [...]}.
type CatalogFile struct {
	Events []ImportEvent `json:"events"`
}

// ImportEvent is one event of the import file. Optional strings are omitted or
// empty; times are RFC 3339 strings. See docs/catalog-import.md for every rule.
type ImportEvent struct {
	Ref            string             `json:"ref"`
	Status         string             `json:"status,omitempty"`
	Kind           string             `json:"kind,omitempty"`
	Title          string             `json:"title"`
	Slug           string             `json:"slug,omitempty"`
	Description    string             `json:"description,omitempty"`
	City           string             `json:"city"`
	Venue          string             `json:"venue"`
	Address        string             `json:"address,omitempty"`
	CoverURL       string             `json:"cover_url,omitempty"`
	CoverWideURL   string             `json:"cover_wide_url,omitempty"`
	CoverPosterURL string             `json:"cover_poster_url,omitempty"`
	Latitude       *float64           `json:"latitude,omitempty"`
	Longitude      *float64           `json:"longitude,omitempty"`
	StartsAt       string             `json:"starts_at,omitempty"`
	EndsAt         string             `json:"ends_at,omitempty"`
	Timezone       string             `json:"timezone,omitempty"`
	AgeRestriction *int               `json:"age_restriction,omitempty"`
	SalesStartAt   string             `json:"sales_start_at,omitempty"`
	SalesEndAt     string             `json:"sales_end_at,omitempty"`
	Currency       string             `json:"currency,omitempty"`
	Genres         []ImportGenre      `json:"genres,omitempty"`
	Scene          *ImportScene       `json:"scene,omitempty"`
	Performers     []ImportPerformer  `json:"performers,omitempty"`
	Occurrences    []ImportOccurrence `json:"occurrences,omitempty"`
	Tiers          []ImportTier       `json:"tiers,omitempty"`
	Seating        *ImportSeating     `json:"seating,omitempty"`
	PromoCodes     []ImportPromo      `json:"promo_codes,omitempty"`
}

// ImportGenre classifies an event.
type ImportGenre struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug,omitempty"`
}

// ImportScene is the stage or promoter brand.
type ImportScene struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Slug    string `json:"slug,omitempty"`
	LogoURL string `json:"logo_url,omitempty"`
}

// ImportPerformer appears at the event; Type defaults to "artist".
type ImportPerformer struct {
	Name        string `json:"name"`
	Slug        string `json:"slug,omitempty"`
	AvatarURL   string `json:"avatar_url,omitempty"`
	Type        string `json:"type,omitempty"`
	StartsAt    string `json:"starts_at,omitempty"`
	DurationMin *int   `json:"duration_min,omitempty"`
}

// ImportOccurrence is one date of a series or recurring event.
type ImportOccurrence struct {
	Ref         string `json:"ref"`
	StartsAt    string `json:"starts_at"`
	EndsAt      string `json:"ends_at"`
	Status      string `json:"status,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	CoverURL    string `json:"cover_url,omitempty"`
}

// ImportTier is a price category. Zone names a zone ref: a seated zone makes a
// seated tier (capacity computed from its seats and not given), a standing zone a
// standing tier; no zone is general admission. Price is required (0 = free).
type ImportTier struct {
	Ref             string `json:"ref"`
	Name            string `json:"name"`
	Description     string `json:"description,omitempty"`
	Price           *int64 `json:"price"`
	Capacity        *int   `json:"capacity,omitempty"`
	PersonsIncluded *int   `json:"persons_included,omitempty"`
	Zone            string `json:"zone,omitempty"`
	Color           string `json:"color,omitempty"`
	SalesStartAt    string `json:"sales_start_at,omitempty"`
	SalesEndAt      string `json:"sales_end_at,omitempty"`
}

// ImportPromo is a promo code of the event. Code is compared case-insensitively
// and stored upper-case; Value is a whole percent (1-100) or kopecks off (>= 1);
// MaxUses absent is unlimited; Tiers lists tier refs of the event, none = every
// tier.
type ImportPromo struct {
	Code     string   `json:"code"`
	Type     string   `json:"type"`
	Value    *int64   `json:"value"`
	StartsAt string   `json:"starts_at,omitempty"`
	EndsAt   string   `json:"ends_at,omitempty"`
	MaxUses  *int     `json:"max_uses,omitempty"`
	Tiers    []string `json:"tiers,omitempty"`
}

// ImportSeating is the seating map.
type ImportSeating struct {
	Width         float64         `json:"width"`
	Height        float64         `json:"height"`
	BackgroundURL string          `json:"background_url,omitempty"`
	Decorations   json.RawMessage `json:"decorations,omitempty"`
	Zones         []ImportZone    `json:"zones"`
}

// ImportZone is an area of the map. A seated zone lists Seats, Rows (the compact
// generator) or both, and needs a PrimaryTier; a standing zone has neither and
// sells the tiers whose zone is this zone.
type ImportZone struct {
	Ref         string          `json:"ref"`
	Name        string          `json:"name"`
	Type        string          `json:"type"`
	Color       string          `json:"color,omitempty"`
	Shape       json.RawMessage `json:"shape,omitempty"`
	SortOrder   *float64        `json:"sort_order,omitempty"`
	PrimaryTier string          `json:"primary_tier,omitempty"`
	Seats       []ImportSeat    `json:"seats,omitempty"`
	Rows        []ImportSeatRow `json:"rows,omitempty"`
}

// ImportSeat is one seat of a seated zone; Tier overrides the zone's primary tier.
type ImportSeat struct {
	Ref      string   `json:"ref"`
	Label    string   `json:"label,omitempty"`
	Row      string   `json:"row,omitempty"`
	Number   *int     `json:"number,omitempty"`
	X        *float64 `json:"x"`
	Y        *float64 `json:"y"`
	Rotation float64  `json:"rotation,omitempty"`
	Tier     string   `json:"tier,omitempty"`
}

// ImportSeatRow generates Seats seats of row Row: seat n (from Start, default 1)
// gets ref and label "<row>-<n>", number n, and position (X + i*DX, Y + i*DY).
type ImportSeatRow struct {
	Row      string  `json:"row"`
	Seats    int     `json:"seats"`
	Start    *int    `json:"start,omitempty"`
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
	DX       float64 `json:"dx,omitempty"`
	DY       float64 `json:"dy,omitempty"`
	Rotation float64 `json:"rotation,omitempty"`
	Tier     string  `json:"tier,omitempty"`
}

// ImportError is one problem of an import file, named by the path of its field
// (events[2].tiers[0].price). Line and Column are set for problems found while
// reading the JSON itself.
type ImportError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

func (e ImportError) String() string {
	s := e.Message
	if e.Path != "" {
		s = e.Path + ": " + s
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d, column %d)", e.Line, e.Column)
	}
	return s
}

// ImportErrors lists every problem found in an import; nothing is written while
// there is one.
type ImportErrors []ImportError

func (l ImportErrors) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns nil for an empty list, else an invalid_request *Error whose
// message lists every problem; ImportProblems recovers the list from it.
func (l ImportErrors) Err() error {
	if len(l) == 0 {
		return nil
	}
	noun := "problems"
	if len(l) == 1 {
		noun = "problem"
	}
	return &Error{
		Code:    CodeInvalidRequest,
		Message: fmt.Sprintf("the catalog has %d %s:\n%s", len(l), noun, indent(l.Error())),
		Param:   l[0].Path,
		Err:     importProblems{l},
	}
}

// importProblems carries the list inside an *Error without repeating it in Error().
type importProblems struct{ list ImportErrors }

func (p importProblems) Error() string { return fmt.Sprintf("%d problem(s)", len(p.list)) }
func (p importProblems) Unwrap() error { return p.list }

// ImportProblems returns the problems carried by err, or nil.
func ImportProblems(err error) ImportErrors {
	var l ImportErrors
	if errors.As(err, &l) {
		return l
	}
	return nil
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// Catalog ids: a prefix and lowercase base32 of SHA-256 over the organizer id and
// the refs, joined by NUL. They never change for the same refs. Below the event,
// the kind of the thing is hashed too, so that a tier and a zone sharing a ref do
// not share an id suffix.
func catalogID(prefix string, n int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return prefix + strings.ToLower(base32.StdEncoding.EncodeToString(sum[:]))[:n]
}

// CatalogEventID is the id of the event eventRef of organizer org.
func CatalogEventID(org, eventRef string) string { return catalogID("evt_", 16, org, eventRef) }

// CatalogTierID is the id of a tier.
func CatalogTierID(org, eventRef, tierRef string) string {
	return catalogID("tier_", 16, org, eventRef, "tier", tierRef)
}

// CatalogOccurrenceID is the id of an occurrence.
func CatalogOccurrenceID(org, eventRef, occRef string) string {
	return catalogID("occ_", 16, org, eventRef, "occurrence", occRef)
}

// CatalogZoneID is the id of a seating zone.
func CatalogZoneID(org, eventRef, zoneRef string) string {
	return catalogID("zone_", 16, org, eventRef, "zone", zoneRef)
}

// CatalogSeatID is the id of a seat (shorter: a map has thousands).
func CatalogSeatID(org, eventRef, zoneRef, seatRef string) string {
	return catalogID("seat_", 10, org, eventRef, "seat", zoneRef, seatRef)
}

// CatalogLayoutID is the id of an event's seating layout.
func CatalogLayoutID(org, eventRef string) string {
	return catalogID("lay_", 16, org, eventRef, "layout")
}

// ParseCatalog reads, validates and builds an import file for organizerID. The
// error, if any, is an invalid_request *Error listing every problem (see
// ImportProblems); no events are returned then. now becomes CreatedAt/UpdatedAt.
func ParseCatalog(organizerID string, data []byte, now time.Time) ([]*Event, error) {
	var f CatalogFile
	errs, bad, fatal := decodeCatalogFile(data, &f)
	if fatal {
		return nil, errs.Err()
	}
	return buildCatalog(organizerID, &f, now, errs, bad)
}

// BuildCatalog validates a catalog built in Go (demo data, tests) and builds its
// events, exactly as ParseCatalog does for a file.
func BuildCatalog(organizerID string, f *CatalogFile, now time.Time) ([]*Event, error) {
	return buildCatalog(organizerID, f, now, nil, map[string]bool{})
}

func buildCatalog(org string, f *CatalogFile, now time.Time, errs ImportErrors, bad map[string]bool) ([]*Event, error) {
	if org == "" {
		return nil, Invalid("organizer", "organizer id is required")
	}
	b := &catalogBuilder{org: org, now: now, errs: errs, bad: bad, locations: map[string]bool{}}
	if f.Events == nil {
		b.add("events", "required: the file is {\"events\": [...]}")
	} else if len(f.Events) == 0 {
		b.add("events", "must list at least one event")
	}
	refs := map[string]int{}
	slugs := map[string]int{}
	var events []*Event
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

var (
	refPattern       = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	slugPattern      = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$`)
	colorPattern     = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
	timezonePattern  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,2}$`)
	performerPattern = regexp.MustCompile(`^[a-z][a-z_-]{0,31}$`)
	rowPattern       = regexp.MustCompile(`^[A-Za-z0-9._]{1,16}$`)
	promoCodePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{3,32}$`)
)

// Palette gives tiers and zones without a color one by position.
var Palette = []string{"#E53935", "#1E88E5", "#43A047", "#FB8C00", "#8E24AA", "#00ACC1", "#F4511E", "#3949AB", "#7CB342", "#6D4C41"}

// DefaultTimezone is the timezone of an event that names none.
const DefaultTimezone = "Europe/Moscow"

func (b *catalogBuilder) ref(path, ref string) bool {
	switch {
	case ref == "":
		b.add(path, "required")
	case !refPattern.MatchString(ref):
		b.add(path, "must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-'")
	default:
		return true
	}
	return false
}

// text checks a free-text field and returns it as a nullable value.
func (b *catalogBuilder) text(path, s string, required bool, max int) *string {
	if strings.TrimSpace(s) == "" {
		if required {
			b.add(path, "required")
		} else if s != "" {
			b.add(path, "must not be blank (omit it instead)")
		}
		return nil
	}
	if n := len([]rune(s)); n > max {
		b.add(path, "must be at most %d characters (is %d)", max, n)
	}
	return &s
}

func (b *catalogBuilder) url(path, s string) *string {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s) > 2048 {
		b.add(path, "must be an http(s) URL")
		return nil
	}
	return &s
}

func (b *catalogBuilder) time(path, s string, required bool) *time.Time {
	if s == "" {
		if required {
			b.add(path, "required")
		}
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		b.add(path, "must be an RFC 3339 date-time such as 2026-07-01T19:00:00+03:00")
		return nil
	}
	t = t.UTC().Truncate(time.Second)
	return &t
}

func (b *catalogBuilder) window(path string, start, end *time.Time, startName, endName string) {
	if start != nil && end != nil && !end.After(*start) {
		b.add(path+"."+endName, "must be after %s", startName)
	}
}

func (b *catalogBuilder) color(path, s string, i int) string {
	if s == "" {
		return Palette[i%len(Palette)]
	}
	if !colorPattern.MatchString(s) {
		b.add(path, "must be a color like #1E88E5")
	}
	return strings.ToUpper(s)
}

func (b *catalogBuilder) timezone(path, s string) string {
	if s == "" {
		return DefaultTimezone
	}
	if ok, seen := b.locations[s]; seen {
		if !ok {
			b.add(path, "unknown IANA time zone %q", s)
		}
		return s
	}
	ok := len(s) <= 64 && timezonePattern.MatchString(s) && s != "Local"
	if ok {
		_, err := time.LoadLocation(s)
		ok = err == nil
	}
	b.locations[s] = ok
	if !ok {
		b.add(path, "unknown IANA time zone %q", s)
	}
	return s
}

func (b *catalogBuilder) event(path string, in *ImportEvent) *Event {
	b.ref(path+".ref", in.Ref)
	e := &Event{
		ID:          CatalogEventID(b.org, in.Ref),
		OrganizerID: b.org,
		Ref:         in.Ref,
		Status:      EventStatus(in.Status),
		Kind:        EventKind(in.Kind),
		Currency:    "RUB",
		Genres:      []Genre{},
		Performers:  []Performer{},
		Occurrences: []Occurrence{},
		Tiers:       []Tier{},
		Zones:       []ZoneSummary{},
		CreatedAt:   b.now,
		UpdatedAt:   b.now,
	}
	if e.Status == "" {
		e.Status = EventDraft
	} else if !validStatus(e.Status) {
		b.add(path+".status", "must be one of draft, published, cancelled, postponed")
	}
	if e.Kind == "" {
		e.Kind = KindSingle
	}
	if t := b.text(path+".title", in.Title, true, 200); t != nil {
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
	if t := b.text(path+".city", in.City, true, 100); t != nil {
		e.City = *t
	}
	if t := b.text(path+".venue", in.Venue, true, 200); t != nil {
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

func validStatus(s EventStatus) bool {
	for _, v := range EventStatuses {
		if s == v {
			return true
		}
	}
	return false
}

func (b *catalogBuilder) coordinates(path string, in *ImportEvent, e *Event) {
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

func (b *catalogBuilder) genres(path string, in *ImportEvent, e *Event) {
	seen := map[string]int{}
	for i, g := range in.Genres {
		p := fmt.Sprintf("%s.genres[%d]", path, i)
		if g.ID == "" {
			b.add(p+".id", "required")
		} else if j, dup := seen[g.ID]; dup {
			b.add(p+".id", "duplicate genre id %q (also genres[%d])", g.ID, j)
		} else {
			seen[g.ID] = i
			b.text(p+".id", g.ID, true, 64)
		}
		out := Genre{ID: g.ID}
		if t := b.text(p+".name", g.Name, true, 100); t != nil {
			out.Name = *t
		}
		out.Slug = b.optionalSlug(p+".slug", g.Slug)
		e.Genres = append(e.Genres, out)
	}
	if len(in.Genres) > 20 {
		b.add(path+".genres", "at most 20 genres")
	}
}

func (b *catalogBuilder) optionalSlug(path, s string) *string {
	if s == "" {
		return nil
	}
	if !slugPattern.MatchString(s) {
		b.add(path, "must be 1-100 characters of a-z, 0-9 and '-', not starting or ending with '-'")
	}
	return &s
}

func (b *catalogBuilder) scene(path string, in *ImportScene) *Scene {
	s := &Scene{ID: in.ID}
	b.text(path+".id", in.ID, true, 64)
	if t := b.text(path+".name", in.Name, true, 200); t != nil {
		s.Name = *t
	}
	s.Slug = b.optionalSlug(path+".slug", in.Slug)
	s.LogoURL = b.url(path+".logo_url", in.LogoURL)
	return s
}

func (b *catalogBuilder) performers(path string, in *ImportEvent, e *Event) {
	if len(in.Performers) > 50 {
		b.add(path+".performers", "at most 50 performers")
	}
	for i, p := range in.Performers {
		pp := fmt.Sprintf("%s.performers[%d]", path, i)
		out := Performer{Type: p.Type}
		if t := b.text(pp+".name", p.Name, true, 200); t != nil {
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

func (b *catalogBuilder) occurrences(path string, in *ImportEvent, e *Event) {
	switch e.Kind {
	case KindSingle:
		if len(in.Occurrences) > 0 {
			b.add(path+".occurrences", "not allowed for a single event: set kind to series or recurring")
		}
	case KindSeries, KindRecurring:
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
		if b.ref(p+".ref", o.Ref) {
			if j, dup := refs[o.Ref]; dup {
				b.add(p+".ref", "duplicate ref %q (also occurrences[%d])", o.Ref, j)
			}
			refs[o.Ref] = i
		}
		out := Occurrence{ID: CatalogOccurrenceID(b.org, in.Ref, o.Ref), Ref: o.Ref, Status: o.Status}
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
			out.Status = OccurrenceScheduled
		case OccurrenceScheduled, OccurrenceCancelled:
		default:
			b.add(p+".status", "must be scheduled or cancelled")
		}
		out.Title = b.text(p+".title", o.Title, false, 200)
		out.Description = b.text(p+".description", o.Description, false, 20000)
		out.CoverURL = b.url(p+".cover_url", o.CoverURL)
		e.Occurrences = append(e.Occurrences, out)
	}
}

// schedule sets the event's start and end: given for a single event, derived
// from the occurrences otherwise (and then, if given, they must match).
func (b *catalogBuilder) schedule(path string, in *ImportEvent, e *Event) {
	hasOccurrences := len(in.Occurrences) > 0
	starts := b.time(path+".starts_at", in.StartsAt, !hasOccurrences && e.Kind == KindSingle)
	ends := b.time(path+".ends_at", in.EndsAt, !hasOccurrences && e.Kind == KindSingle)
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

// zoneTypes maps the seating's zone refs to their types, for the tiers.
func (b *catalogBuilder) zoneTypes(path string, in *ImportEvent) map[string]ZoneType {
	types := map[string]ZoneType{}
	if in.Seating == nil {
		return types
	}
	for _, z := range in.Seating.Zones {
		if _, dup := types[z.Ref]; z.Ref != "" && !dup {
			types[z.Ref] = ZoneType(z.Type)
		}
	}
	return types
}

func (b *catalogBuilder) tiers(path string, in *ImportEvent, e *Event, zoneTypes map[string]ZoneType) {
	if len(in.Tiers) > MaxTiersPerEvent {
		b.add(path+".tiers", "at most %d tiers", MaxTiersPerEvent)
	}
	refs := map[string]int{}
	for i, t := range in.Tiers {
		p := fmt.Sprintf("%s.tiers[%d]", path, i)
		if b.ref(p+".ref", t.Ref) {
			if j, dup := refs[t.Ref]; dup {
				b.add(p+".ref", "duplicate ref %q (also tiers[%d])", t.Ref, j)
			}
			refs[t.Ref] = i
		}
		out := Tier{ID: CatalogTierID(b.org, in.Ref, t.Ref), Ref: t.Ref, PersonsIncluded: 1}
		if n := b.text(p+".name", t.Name, true, 200); n != nil {
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
		zoneType, inZone := ZoneType(""), t.Zone != ""
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
			out.Seated = zoneType == ZoneSeated
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

// seating builds the map: zones, seats (given and generated), the seated tiers'
// capacities and the zone summaries.
func (b *catalogBuilder) seating(path string, in *ImportEvent, e *Event) {
	p := path + ".seating"
	s := in.Seating
	e.HasSeating = true
	st := &Seating{
		LayoutID: CatalogLayoutID(b.org, in.Ref), Width: s.Width, Height: s.Height,
		BackgroundURL: b.url(p+".background_url", s.BackgroundURL),
		Decorations:   b.jsonObject(p+".decorations", s.Decorations),
		Zones:         []Zone{},
	}
	e.Seating = st
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
	tierIndex := map[string]int{}
	for i, t := range in.Tiers {
		if _, dup := tierIndex[t.Ref]; !dup && t.Ref != "" {
			tierIndex[t.Ref] = i
		}
	}
	seatsOfTier := map[string]int{}    // tier ref -> seats
	standingTiers := map[string]bool{} // zone ref -> has a tier
	for _, t := range in.Tiers {
		if t.Zone != "" {
			standingTiers[t.Zone] = true
		}
	}
	zoneRefs := map[string]int{}
	seatRefs := map[string]string{} // seat ref -> path where first seen
	seatIDs := map[string]bool{}
	total := 0
	tooMany := false
	for k, z := range s.Zones {
		zp := fmt.Sprintf("%s.zones[%d]", p, k)
		if b.ref(zp+".ref", z.Ref) {
			if j, dup := zoneRefs[z.Ref]; dup {
				b.add(zp+".ref", "duplicate ref %q (also zones[%d])", z.Ref, j)
			}
			zoneRefs[z.Ref] = k
		}
		out := Zone{ID: CatalogZoneID(b.org, in.Ref, z.Ref), Ref: z.Ref, Type: ZoneType(z.Type), Shape: b.jsonObject(zp+".shape", z.Shape), SortOrder: float64(k)}
		if n := b.text(zp+".name", z.Name, true, 200); n != nil {
			out.Name = *n
		}
		out.Color = b.color(zp+".color", z.Color, k)
		if z.SortOrder != nil {
			out.SortOrder = *z.SortOrder
		}
		switch out.Type {
		case ZoneSeated:
			b.seatedZone(zp, in, &z, &out, tierIndex, seatsOfTier, seatRefs, seatIDs, &total, &tooMany)
		case ZoneStanding:
			if z.PrimaryTier != "" {
				b.add(zp+".primary_tier", "only a seated zone has a primary tier; a standing zone sells the tiers whose zone is %q", z.Ref)
			}
			if len(z.Seats) > 0 {
				b.add(zp+".seats", "only a seated zone has seats")
			}
			if len(z.Rows) > 0 {
				b.add(zp+".rows", "only a seated zone has seats")
			}
			if !standingTiers[z.Ref] && z.Ref != "" {
				b.add(zp, "standing zone %q has no tier: give a tier \"zone\": %q and a capacity", z.Ref, z.Ref)
			}
		case "":
			b.add(zp+".type", "required: seated or standing")
		default:
			b.add(zp+".type", "must be seated or standing")
		}
		st.Zones = append(st.Zones, out)
		e.Zones = append(e.Zones, ZoneSummary{
			ID: out.ID, Name: out.Name, Type: out.Type, PrimaryTierID: out.PrimaryTierID, SeatCount: len(out.Seats),
		})
	}
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

func (b *catalogBuilder) seatedZone(zp string, in *ImportEvent, z *ImportZone, out *Zone, tierIndex map[string]int,
	seatsOfTier map[string]int, seatRefs map[string]string, seatIDs map[string]bool, total *int, tooMany *bool) {
	// seatTier checks a tier ref used by this zone (primary or override).
	seatTier := func(path, ref string) bool {
		i, ok := tierIndex[ref]
		switch {
		case !ok:
			b.add(path, "no tier with ref %q", ref)
		case in.Tiers[i].Zone != z.Ref:
			where := "a general-admission tier"
			if in.Tiers[i].Zone != "" {
				where = fmt.Sprintf("in zone %q", in.Tiers[i].Zone)
			}
			b.add(path, "tier %q is %s; a seat's tier must have \"zone\": %q", ref, where, z.Ref)
		default:
			return true
		}
		return false
	}
	primaryOK := false
	if z.PrimaryTier == "" {
		b.add(zp+".primary_tier", "required for a seated zone")
	} else {
		primaryOK = seatTier(zp+".primary_tier", z.PrimaryTier)
		out.PrimaryTierID = CatalogTierID(b.org, in.Ref, z.PrimaryTier)
	}
	if len(z.Seats) == 0 && len(z.Rows) == 0 {
		b.add(zp+".seats", "a seated zone needs at least one seat (seats or rows)")
	}
	addSeat := func(sp string, seat Seat, ref, tierRef string) {
		if *tooMany {
			return
		}
		if *total >= MaxSeatsPerEvent {
			*tooMany = true
			b.add(zp[:strings.LastIndex(zp, ".zones[")], "more than %d seats in one event", MaxSeatsPerEvent)
			return
		}
		*total++
		if first, dup := seatRefs[ref]; dup {
			b.add(sp, "duplicate seat ref %q (also %s)", ref, first)
			return
		}
		seatRefs[ref] = sp
		seat.ID = CatalogSeatID(b.org, in.Ref, z.Ref, ref)
		if seatIDs[seat.ID] {
			b.add(sp, "seat id collision for ref %q: rename the seat", ref)
			return
		}
		seatIDs[seat.ID] = true
		effective := z.PrimaryTier
		if tierRef != "" {
			effective = tierRef
			if tierRef != z.PrimaryTier {
				seat.TierID = CatalogTierID(b.org, in.Ref, tierRef)
			}
		}
		seatsOfTier[effective]++
		out.Seats = append(out.Seats, seat)
	}
	for i, s := range z.Seats {
		sp := fmt.Sprintf("%s.seats[%d]", zp, i)
		okRef := b.ref(sp+".ref", s.Ref)
		seat := Seat{Label: s.Label, Rotation: s.Rotation}
		if seat.Label == "" {
			seat.Label = s.Ref
		} else if len([]rune(seat.Label)) > 64 {
			b.add(sp+".label", "must be at most 64 characters")
		}
		if s.Row != "" {
			row := s.Row
			if len([]rune(row)) > 32 {
				b.add(sp+".row", "must be at most 32 characters")
			}
			seat.Row = &row
		}
		if s.Number != nil {
			n := *s.Number
			seat.Number = &n
		}
		if s.X == nil {
			b.add(sp+".x", "required")
		} else {
			seat.X = *s.X
		}
		if s.Y == nil {
			b.add(sp+".y", "required")
		} else {
			seat.Y = *s.Y
		}
		okTier := s.Tier == "" || seatTier(sp+".tier", s.Tier)
		if okRef && okTier && (primaryOK || s.Tier != "") {
			addSeat(sp, seat, s.Ref, s.Tier)
		}
	}
	for i, r := range z.Rows {
		rp := fmt.Sprintf("%s.rows[%d]", zp, i)
		okRow := true
		if r.Row == "" {
			b.add(rp+".row", "required")
			okRow = false
		} else if !rowPattern.MatchString(r.Row) {
			b.add(rp+".row", "must be 1-16 characters of A-Z, a-z, 0-9, '.' or '_' (it becomes part of the seat refs)")
			okRow = false
		}
		if r.Seats < 1 || r.Seats > MaxSeatsPerRow {
			b.add(rp+".seats", "must be between 1 and %d", MaxSeatsPerRow)
			okRow = false
		}
		start := 1
		if r.Start != nil {
			start = *r.Start
			if start < 0 || start > 100000 {
				b.add(rp+".start", "must be between 0 and 100000")
				okRow = false
			}
		}
		if r.Seats > 1 && r.DX == 0 && r.DY == 0 {
			b.add(rp+".dx", "dx or dy must be non-zero, or the seats would overlap")
		}
		okTier := r.Tier == "" || seatTier(rp+".tier", r.Tier)
		if !okRow || !okTier || !(primaryOK || r.Tier != "") {
			continue
		}
		for j := 0; j < r.Seats && !*tooMany; j++ {
			n, row := start+j, r.Row
			ref := r.Row + "-" + strconv.Itoa(n)
			seat := Seat{
				Label: ref, Row: &row, Number: &n,
				X: r.X + float64(j)*r.DX, Y: r.Y + float64(j)*r.DY, Rotation: r.Rotation,
			}
			if math.IsInf(seat.X, 0) || math.IsInf(seat.Y, 0) {
				b.add(rp, "seat positions overflow")
				break
			}
			addSeat(rp, seat, ref, r.Tier)
		}
	}
}

// promos builds the event's promo codes. Tier refs become the tiers' ids.
func (b *catalogBuilder) promos(path string, in *ImportEvent, e *Event) {
	if len(in.PromoCodes) > MaxPromoCodesPerEvent {
		b.add(path+".promo_codes", "at most %d promo codes", MaxPromoCodesPerEvent)
	}
	tierRefs := map[string]bool{}
	for _, t := range in.Tiers {
		tierRefs[t.Ref] = true
	}
	codes := map[string]int{} // normalised code -> index
	for i, pc := range in.PromoCodes {
		p := fmt.Sprintf("%s.promo_codes[%d]", path, i)
		out := Promo{Code: NormalizePromoCode(pc.Code), Type: PromoType(pc.Type)}
		switch {
		case pc.Code == "":
			b.add(p+".code", "required")
		case !promoCodePattern.MatchString(pc.Code):
			b.add(p+".code", "must be 3-32 characters of A-Z, a-z, 0-9, '-' or '_'")
		default:
			if j, dup := codes[out.Code]; dup {
				if first := in.PromoCodes[j].Code; first != pc.Code {
					b.add(p+".code", "duplicate code %q (also promo_codes[%d] as %q; codes are case-insensitive)", pc.Code, j, first)
				} else {
					b.add(p+".code", "duplicate code %q (also promo_codes[%d])", pc.Code, j)
				}
			} else {
				codes[out.Code] = i
			}
		}
		switch out.Type {
		case "":
			b.add(p+".type", "required: percent or fixed")
		case PromoPercent, PromoFixed:
		default:
			b.add(p+".type", "must be percent or fixed")
		}
		switch {
		case pc.Value == nil:
			b.add(p+".value", "required (a whole percent for a percent code, kopecks for a fixed code)")
		case out.Type == PromoPercent && (*pc.Value < 1 || *pc.Value > 100):
			b.add(p+".value", "must be between 1 and 100 for a percent code")
		case out.Type == PromoFixed && *pc.Value < 1:
			b.add(p+".value", "must be >= 1 (kopecks) for a fixed code")
		default:
			out.Value = *pc.Value
		}
		out.StartsAt = b.time(p+".starts_at", pc.StartsAt, false)
		out.EndsAt = b.time(p+".ends_at", pc.EndsAt, false)
		b.window(p, out.StartsAt, out.EndsAt, "starts_at", "ends_at")
		if pc.MaxUses != nil {
			if *pc.MaxUses < 1 {
				b.add(p+".max_uses", "must be >= 1 (omit it for unlimited uses)")
			} else {
				out.MaxUses = *pc.MaxUses
			}
		}
		seen := map[string]int{}
		for k, ref := range pc.Tiers {
			tp := fmt.Sprintf("%s.tiers[%d]", p, k)
			if j, dup := seen[ref]; dup {
				b.add(tp, "duplicate tier %q (also tiers[%d])", ref, j)
				continue
			}
			seen[ref] = k
			if !tierRefs[ref] || ref == "" {
				b.add(tp, "no tier with ref %q in this event's tiers", ref)
				continue
			}
			out.TierIDs = append(out.TierIDs, CatalogTierID(b.org, in.Ref, ref))
		}
		e.Promos = append(e.Promos, out)
	}
}

// jsonObject accepts any JSON object (opaque to tix) or nothing.
func (b *catalogBuilder) jsonObject(path string, raw json.RawMessage) json.RawMessage {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		b.add(path, "must be a JSON object")
		return nil
	}
	return raw
}

// CheckReimport lists what replacing old with updated would break in one
// environment's stock: a tier with sales cannot be removed, nor its capacity go
// below the units sold; a seat that is sold, reserved or held cannot be removed,
// nor move to another tier; an occurrence with sales cannot be removed. path
// names updated in the import file (events[3]). Expired holds and reservations
// do not count.
func CheckReimport(path string, old, updated *Event, env Environment, stock *Stock, now time.Time) ImportErrors {
	if old == nil || stock == nil {
		return nil
	}
	var errs ImportErrors
	add := func(p, format string, args ...any) {
		errs = append(errs, ImportError{Path: p, Message: fmt.Sprintf(format, args...)})
	}
	newOccs := map[string]bool{}
	for _, k := range updated.OccurrenceKeys() {
		newOccs[k] = true
	}
	newTiers := map[string]int{}
	for j, t := range updated.Tiers {
		newTiers[t.ID] = j
	}
	occName := func(id string) string {
		if o, ok := old.Occurrence(id); ok {
			return fmt.Sprintf("%q (%s)", o.Ref, id)
		}
		return id
	}
	tierName := func(id string) string {
		if t, ok := old.Tier(id); ok {
			return fmt.Sprintf("%q (%s)", t.Ref, id)
		}
		return id
	}

	removedOccs := map[string]int{}  // occurrence id -> units and seats taken
	removedTiers := map[string]int{} // tier id -> units and seats taken
	maxSold := map[string]int{}      // tier id -> most units sold in one occurrence
	maxOcc := map[string]string{}
	for k, sold := range stock.Sold {
		if sold <= 0 {
			continue
		}
		if !newOccs[k.Occurrence] {
			removedOccs[k.Occurrence] += sold
			continue
		}
		if _, ok := newTiers[k.ID]; !ok {
			removedTiers[k.ID] += sold
			continue
		}
		if sold > maxSold[k.ID] || (sold == maxSold[k.ID] && k.Occurrence < maxOcc[k.ID]) {
			maxSold[k.ID], maxOcc[k.ID] = sold, k.Occurrence
		}
	}

	newSeats := map[string]string{} // seat id -> effective tier id
	if updated.Seating != nil {
		for _, z := range updated.Seating.Zones {
			for _, s := range z.Seats {
				tier := s.TierID
				if tier == "" {
					tier = z.PrimaryTierID
				}
				newSeats[s.ID] = tier
			}
		}
	}
	oldLabels := map[string]string{}
	if old.Seating != nil {
		for _, z := range old.Seating.Zones {
			for _, s := range z.Seats {
				oldLabels[s.ID] = s.Label
			}
		}
	}
	label := func(id string) string {
		if l, ok := oldLabels[id]; ok {
			return l
		}
		return id
	}
	var removedSeats, movedSeats []string
	for k, st := range stock.Seats {
		if !st.Taken(now) {
			continue
		}
		if !newOccs[k.Occurrence] {
			removedOccs[k.Occurrence]++
			continue
		}
		if _, ok := newTiers[st.TierID]; !ok && st.TierID != "" {
			removedTiers[st.TierID]++
			continue
		}
		tier, ok := newSeats[k.ID]
		switch {
		case !ok:
			removedSeats = append(removedSeats, fmt.Sprintf("%s (%s)", label(k.ID), st.Status))
		case st.TierID != "" && tier != st.TierID:
			movedSeats = append(movedSeats, fmt.Sprintf("%s (%s as %s)", label(k.ID), st.Status, tierName(st.TierID)))
		}
	}

	for _, id := range sortedKeys(removedOccs) {
		if id == NoOccurrence {
			add(path+".kind", "the event has %d units or seats taken in %s as a single event and cannot be given occurrences", removedOccs[id], env)
			continue
		}
		add(path+".occurrences", "occurrence %s has %d units or seats taken in %s and cannot be removed (set its status to cancelled instead)", occName(id), removedOccs[id], env)
	}
	for _, id := range sortedKeys(removedTiers) {
		add(path+".tiers", "tier %s has %d units or seats taken in %s and cannot be removed", tierName(id), removedTiers[id], env)
	}
	for _, id := range sortedKeys(maxSold) {
		j := newTiers[id]
		t := updated.Tiers[j]
		sold := maxSold[id]
		where := ""
		if occ := maxOcc[id]; occ != NoOccurrence {
			where = " for occurrence " + occName(occ)
		}
		wasSeated := false
		if ot, ok := old.Tier(id); ok {
			wasSeated = ot.Seated
		}
		switch {
		case t.Seated && wasSeated:
			// A seated tier's sales are its seats, checked below.
		case t.Seated:
			add(fmt.Sprintf("%s.tiers[%d].zone", path, j), "the tier has %d units sold in %s%s as general admission and cannot become seated", sold, env, where)
		case t.Capacity < sold:
			add(fmt.Sprintf("%s.tiers[%d].capacity", path, j), "must be >= %d: %d units are sold in %s%s", sold, sold, env, where)
		}
	}
	if len(removedSeats) > 0 {
		add(path+".seating", "%d taken seats in %s cannot be removed: %s", len(removedSeats), env, listSome(removedSeats))
	}
	if len(movedSeats) > 0 {
		add(path+".seating", "%d taken seats in %s cannot move to another tier: %s", len(movedSeats), env, listSome(movedSeats))
	}
	return errs
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
