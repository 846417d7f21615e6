package ticketing

import (
	"encoding/json"
	"time"
)

// Environment separates test data and money from live. Every key, order, hold and
// stock counter belongs to one; the descriptive catalog is shared by both.
type Environment string

// The two environments.
const (
	EnvTest Environment = "test"
	EnvLive Environment = "live"
)

// Valid reports whether e is test or live.
func (e Environment) Valid() bool { return e == EnvTest || e == EnvLive }

// Organizer owns events, keys and (later) webhook endpoints.
type Organizer struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Verified  bool      `json:"verified"`
	CreatedAt time.Time `json:"created_at"`
}

// EventStatus is an event's lifecycle state. Only drafts are hidden from keys.
type EventStatus string

// Event statuses. The contract keeps the list open.
const (
	EventDraft     EventStatus = "draft"
	EventPublished EventStatus = "published"
	EventCancelled EventStatus = "cancelled"
	EventPostponed EventStatus = "postponed"
)

// EventStatuses lists every status the import accepts.
var EventStatuses = []EventStatus{EventDraft, EventPublished, EventCancelled, EventPostponed}

// EventKind says whether an event has occurrences.
type EventKind string

// Event kinds: single has no occurrences; series and recurring sell per occurrence.
const (
	KindSingle    EventKind = "single"
	KindSeries    EventKind = "series"
	KindRecurring EventKind = "recurring"
)

// Event is one catalog entry with everything a buyer browses. Stock (sold counts,
// seat states) is kept apart, per environment; see Stock.
type Event struct {
	ID             string          `json:"id"`
	OrganizerID    string          `json:"organizer_id"`
	Ref            string          `json:"ref"` // organizer's stable reference from the import file
	Status         EventStatus     `json:"status"`
	Kind           EventKind       `json:"kind"`
	Title          string          `json:"title"`
	Slug           *string         `json:"slug"`
	Description    *string         `json:"description"`
	City           string          `json:"city"`
	Venue          string          `json:"venue"`
	Address        *string         `json:"address"`
	CoverURL       *string         `json:"cover_url"`
	CoverWideURL   *string         `json:"cover_wide_url"`
	CoverPosterURL *string         `json:"cover_poster_url"`
	Latitude       *float64        `json:"latitude"`
	Longitude      *float64        `json:"longitude"`
	StartsAt       time.Time       `json:"starts_at"`
	EndsAt         time.Time       `json:"ends_at"`
	Timezone       string          `json:"timezone"`
	AgeRestriction *int            `json:"age_restriction"`
	SalesStartAt   *time.Time      `json:"sales_start_at"`
	SalesEndAt     *time.Time      `json:"sales_end_at"`
	Currency       string          `json:"currency"`
	Genres         []Genre         `json:"genres"`
	Scene          *Scene          `json:"scene"`
	Performers     []Performer     `json:"performers"`
	Occurrences    []Occurrence    `json:"occurrences"`
	Tiers          []Tier          `json:"tiers"`
	Seating        *Seating        `json:"-"` // stored apart; loaded only for the seating map
	HasSeating     bool            `json:"has_seating"`
	Zones          []ZoneSummary   `json:"zones"`            // zones without seats, for availability
	Promos         []Promo         `json:"promos,omitempty"` // never shown to keys; used by orders
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	Extra          json.RawMessage `json:"-"`

	// SeatBlocks is how many stock partitions the event's seats spread over
	// (SeatBlock); 0 for events of the one-partition layout.
	SeatBlocks int `json:"seat_blocks,omitempty"`
}

// Genre classifies an event.
type Genre struct {
	ID   string  `json:"id"`
	Name string  `json:"name"`
	Slug *string `json:"slug"`
}

// Scene is the stage or promoter brand an event belongs to.
type Scene struct {
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	Slug    *string `json:"slug"`
	LogoURL *string `json:"logo_url"`
}

// Performer appears at an event.
type Performer struct {
	Name        string     `json:"name"`
	Slug        *string    `json:"slug"`
	AvatarURL   *string    `json:"avatar_url"`
	Type        string     `json:"type"`
	StartsAt    *time.Time `json:"starts_at"`
	DurationMin *int       `json:"duration_min"`
}

// OccurrenceStatus values: scheduled occurrences sell, cancelled ones do not.
const (
	OccurrenceScheduled = "scheduled"
	OccurrenceCancelled = "cancelled"
)

// Occurrence is one date of a series or recurring event; stock is per occurrence.
type Occurrence struct {
	ID          string    `json:"id"`
	Ref         string    `json:"ref"`
	StartsAt    time.Time `json:"starts_at"`
	EndsAt      time.Time `json:"ends_at"`
	Status      string    `json:"status"`
	Title       *string   `json:"title"`
	Description *string   `json:"description"`
	CoverURL    *string   `json:"cover_url"`
}

// Tier is a price category. A general-admission tier has no zone; a seated tier
// belongs to a seated zone and its capacity is its number of seats; a standing
// tier belongs to a standing zone. Capacity counts per occurrence.
type Tier struct {
	ID              string     `json:"id"`
	Ref             string     `json:"ref"`
	Name            string     `json:"name"`
	Description     *string    `json:"description"`
	Price           int64      `json:"price"`
	Capacity        int        `json:"capacity"`
	PersonsIncluded int        `json:"persons_included"`
	ZoneID          string     `json:"zone_id,omitempty"`
	Seated          bool       `json:"seated"`
	Color           string     `json:"color"`
	SalesStartAt    *time.Time `json:"sales_start_at"`
	SalesEndAt      *time.Time `json:"sales_end_at"`
}

// InSeatingZone reports whether the tier belongs to a zone of the seating map,
// seated or standing: the contract's Tier.seating.
func (t *Tier) InSeatingZone() bool { return t.Seated || t.ZoneID != "" }

// ZoneType is seated or standing.
type ZoneType string

// Zone types.
const (
	ZoneSeated   ZoneType = "seated"
	ZoneStanding ZoneType = "standing"
)

// ZoneSummary is a zone without its seats, kept on the event for availability.
type ZoneSummary struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Type          ZoneType `json:"type"`
	PrimaryTierID string   `json:"primary_tier_id,omitempty"`
	SeatCount     int      `json:"seat_count"`
}

// Seating is the event's map: layout geometry, zones and seats. It is large
// (thousands of seats) and stored apart from the event.
type Seating struct {
	LayoutID      string          `json:"layout_id"`
	Width         float64         `json:"width"`
	Height        float64         `json:"height"`
	BackgroundURL *string         `json:"background_url"`
	Decorations   json.RawMessage `json:"decorations"`
	Zones         []Zone          `json:"zones"`
}

// Zone is an area of the map: seated (with seats) or standing (with standing tiers).
type Zone struct {
	ID            string          `json:"id"`
	Ref           string          `json:"ref"`
	Name          string          `json:"name"`
	Type          ZoneType        `json:"type"`
	Color         string          `json:"color"`
	Shape         json.RawMessage `json:"shape"`
	SortOrder     float64         `json:"sort_order"`
	PrimaryTierID string          `json:"primary_tier_id,omitempty"`
	Seats         []Seat          `json:"seats,omitempty"`
}

// Seat is one sellable place. Its tier is its own TierID or, when empty, the zone's
// primary tier.
type Seat struct {
	ID       string  `json:"id"`
	Label    string  `json:"label"`
	Row      *string `json:"row,omitempty"`
	Number   *int    `json:"number,omitempty"`
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
	Rotation float64 `json:"rotation,omitempty"`
	TierID   string  `json:"tier_id,omitempty"`
}

// Occurrence returns the occurrence with the given id.
func (e *Event) Occurrence(id string) (*Occurrence, bool) {
	for i := range e.Occurrences {
		if e.Occurrences[i].ID == id {
			return &e.Occurrences[i], true
		}
	}
	return nil, false
}

// Tier returns the tier with the given id.
func (e *Event) Tier(id string) (*Tier, bool) {
	for i := range e.Tiers {
		if e.Tiers[i].ID == id {
			return &e.Tiers[i], true
		}
	}
	return nil, false
}

// Visible reports whether keys may see the event at all (drafts are 404).
func (e *Event) Visible() bool { return e.Status != EventDraft }

// IsFree reports whether every tier is free (an event with no tiers is not free).
func (e *Event) IsFree() bool {
	if len(e.Tiers) == 0 {
		return false
	}
	for _, t := range e.Tiers {
		if t.Price != 0 {
			return false
		}
	}
	return true
}

// MinPrice is the lowest tier price, or nil when the event has no tiers.
func (e *Event) MinPrice() *int64 {
	var m *int64
	for _, t := range e.Tiers {
		if m == nil || t.Price < *m {
			p := t.Price
			m = &p
		}
	}
	return m
}

// MaxPrice is the highest tier price, or nil when the event has no tiers.
func (e *Event) MaxPrice() *int64 {
	var m *int64
	for _, t := range e.Tiers {
		if m == nil || t.Price > *m {
			p := t.Price
			m = &p
		}
	}
	return m
}

// OccurrenceKeys lists the stock keys of the event: its occurrence ids, or a single
// NoOccurrence for a single event.
func (e *Event) OccurrenceKeys() []string {
	if len(e.Occurrences) == 0 {
		return []string{NoOccurrence}
	}
	ids := make([]string, len(e.Occurrences))
	for i, o := range e.Occurrences {
		ids[i] = o.ID
	}
	return ids
}

// NoOccurrence is the occurrence key of a single event's stock.
const NoOccurrence = "-"

// NextOccurrence is the first scheduled occurrence that has not started yet.
func (e *Event) NextOccurrence(now time.Time) *Occurrence {
	var next *Occurrence
	for i := range e.Occurrences {
		o := &e.Occurrences[i]
		if o.Status == OccurrenceCancelled || !o.StartsAt.After(now) {
			continue
		}
		if next == nil || o.StartsAt.Before(next.StartsAt) {
			next = o
		}
	}
	return next
}
