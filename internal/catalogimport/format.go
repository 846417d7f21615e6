package catalogimport

import "encoding/json"

// Import limits.
const (
	MaxSeatsPerEvent       = 50000
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
