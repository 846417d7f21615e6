package api

import (
	"encoding/json"
	"time"

	"tix/internal/clock"
	"tix/internal/emailjobs"
	"tix/internal/ticketing"
)

// The contract's response objects (section 2): one Go type per wire shape.
// Where a domain type's JSON tags already give the wire bytes it is sent as
// it is (ticketing.Genre, ticketing.Scene, ticketing.Buyer,
// ticketing.WebhookOrder, emailjobs.JobView); the types below exist because the
// wire differs from the stored shape (timestamps at second precision in UTC,
// computed counts, members the store keeps and the API does not send).
// Nullable fields are pointers without omitempty: null is sent as null, never
// omitted.

// pageJSON is every list response that pages: data, next_cursor, has_more.
type pageJSON[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

// listJSON is a list response without paging: data only.
type listJSON[T any] struct {
	Data []T `json:"data"`
}

type nextOccurrenceJSON struct {
	ID       string `json:"id"`
	StartsAt string `json:"starts_at"`
}

type eventListItemJSON struct {
	ID             string            `json:"id"`
	Title          string            `json:"title"`
	Slug           *string           `json:"slug"`
	Description    *string           `json:"description"`
	City           string            `json:"city"`
	Venue          string            `json:"venue"`
	CoverURL       *string           `json:"cover_url"`
	CoverWideURL   *string           `json:"cover_wide_url"`
	CoverPosterURL *string           `json:"cover_poster_url"`
	Latitude       *float64          `json:"latitude"`
	Longitude      *float64          `json:"longitude"`
	StartsAt       string            `json:"starts_at"`
	EndsAt         string            `json:"ends_at"`
	Timezone       string            `json:"timezone"`
	Status         string            `json:"status"`
	EventKind      string            `json:"event_kind"`
	IsFree         bool              `json:"is_free"`
	Genres         []ticketing.Genre `json:"genres"`
	Scene          *ticketing.Scene  `json:"scene"`
	MinPrice       *int64            `json:"min_price"`
	Currency       string            `json:"currency"`
	QtyTotal       int               `json:"qty_total"`
	QtySold        int               `json:"qty_sold"`
}

// eventListEntryJSON always carries next_occurrence (null for single events).
type eventListEntryJSON struct {
	eventListItemJSON
	NextOccurrence *nextOccurrenceJSON `json:"next_occurrence"`
}

type occurrenceJSON struct {
	ID          string  `json:"id"`
	StartsAt    string  `json:"starts_at"`
	EndsAt      string  `json:"ends_at"`
	Status      string  `json:"status"`
	Title       *string `json:"title"`
	Description *string `json:"description"`
	CoverURL    *string `json:"cover_url"`
}

type performerJSON struct {
	Name        string  `json:"name"`
	Slug        *string `json:"slug"`
	AvatarURL   *string `json:"avatar_url"`
	Type        string  `json:"type"`
	StartsAt    *string `json:"starts_at"`
	DurationMin *int    `json:"duration_min"`
}

// tierJSON is the contract's Tier: an AvailabilityTier (price, counts, sales
// window) plus the tier's description, persons per unit and seating flag.
type tierJSON struct {
	availabilityTierJSON
	Description     *string `json:"description"`
	PersonsIncluded int     `json:"persons_included"`
	Seating         bool    `json:"seating"`
}

type eventDetailJSON struct {
	eventListItemJSON
	Address        *string          `json:"address"`
	AgeRestriction *int             `json:"age_restriction"`
	SalesStartAt   *string          `json:"sales_start_at"`
	SalesEndAt     *string          `json:"sales_end_at"`
	HasSeating     bool             `json:"has_seating"`
	Tiers          []tierJSON       `json:"tiers"`
	Occurrences    []occurrenceJSON `json:"occurrences"`
	Performers     []performerJSON  `json:"performers"`
}

// ts and tsPtr render timestamps in the one format tix sends (clock.Format).
func ts(t time.Time) string { return clock.Format(t) }

func tsPtr(t *time.Time) *string { return clock.FormatPtr(t) }

func renderListItem(e *ticketing.Event, qtyTotal, qtySold int) eventListItemJSON {
	item := eventListItemJSON{
		ID: e.ID, Title: e.Title, Slug: e.Slug, Description: e.Description, City: e.City, Venue: e.Venue,
		CoverURL: e.CoverURL, CoverWideURL: e.CoverWideURL, CoverPosterURL: e.CoverPosterURL,
		Latitude: e.Latitude, Longitude: e.Longitude, StartsAt: ts(e.StartsAt), EndsAt: ts(e.EndsAt),
		Timezone: e.Timezone, Status: string(e.Status), EventKind: string(e.Kind), IsFree: e.IsFree(),
		Genres: []ticketing.Genre{}, Scene: e.Scene, MinPrice: e.MinPrice(), Currency: e.Currency, QtyTotal: qtyTotal, QtySold: qtySold,
	}
	item.Genres = append(item.Genres, e.Genres...)
	return item
}

// capacity is the event's qty_total: every tier's capacity in every occurrence.
func capacity(e *ticketing.Event) int {
	total := 0
	for _, t := range e.Tiers {
		total += t.Capacity
	}
	return total * len(e.OccurrenceKeys())
}

func renderListEntry(le ticketing.ListedEvent, now time.Time) eventListEntryJSON {
	out := eventListEntryJSON{eventListItemJSON: renderListItem(le.Event, capacity(le.Event), le.QtySold)}
	if o := le.Event.NextOccurrence(now); o != nil {
		out.NextOccurrence = &nextOccurrenceJSON{ID: o.ID, StartsAt: ts(o.StartsAt)}
	}
	return out
}

func renderTier(v *ticketing.EventView, t *ticketing.Tier) tierJSON {
	occ := v.OccurrenceID
	c := v.Stock.TierCount(v.Event, t, occ, v.Now)
	return tierJSON{
		availabilityTierJSON: availabilityTierJSON{
			ID: t.ID, Name: t.Name, Price: t.Price, Currency: v.Event.Currency,
			QtyTotal: c.Total, QtySold: c.Sold, QtyAvailable: c.Available, SoldOut: c.SoldOut(),
			SalesStartAt: tsPtr(t.SalesStartAt), SalesEndAt: tsPtr(t.SalesEndAt),
			IsOnSale: v.Event.TierOnSale(t, occ, v.Now),
		},
		Description: t.Description, PersonsIncluded: t.PersonsIncluded, Seating: t.InSeatingZone(),
	}
}

func renderTiers(v *ticketing.EventView) ([]tierJSON, int) {
	tiers := make([]tierJSON, 0, len(v.Event.Tiers))
	sold := 0
	for i := range v.Event.Tiers {
		t := renderTier(v, &v.Event.Tiers[i])
		sold += t.QtySold
		tiers = append(tiers, t)
	}
	return tiers, sold
}

func renderDetail(v *ticketing.EventView) eventDetailJSON {
	e := v.Event
	tiers, sold := renderTiers(v)
	d := eventDetailJSON{
		eventListItemJSON: renderListItem(e, capacity(e), sold),
		Address:           e.Address, AgeRestriction: e.AgeRestriction,
		SalesStartAt: tsPtr(e.SalesStartAt), SalesEndAt: tsPtr(e.SalesEndAt),
		HasSeating: e.HasSeating, Tiers: tiers, Occurrences: []occurrenceJSON{}, Performers: []performerJSON{},
	}
	for _, o := range e.Occurrences {
		d.Occurrences = append(d.Occurrences, occurrenceJSON{
			ID: o.ID, StartsAt: ts(o.StartsAt), EndsAt: ts(o.EndsAt), Status: o.Status,
			Title: o.Title, Description: o.Description, CoverURL: o.CoverURL,
		})
	}
	for _, p := range e.Performers {
		d.Performers = append(d.Performers, performerJSON{
			Name: p.Name, Slug: p.Slug, AvatarURL: p.AvatarURL, Type: p.Type, StartsAt: tsPtr(p.StartsAt), DurationMin: p.DurationMin,
		})
	}
	return d
}

// Availability (contract section 2, AvailabilityResponse).

type availabilityZoneJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Type      string `json:"type"`
	Capacity  *int   `json:"capacity"`
	Available *int   `json:"available"`
	SoldOut   bool   `json:"sold_out"`
}

// availabilityTierJSON is the contract's AvailabilityTier, and the first part
// of every Tier (tierJSON embeds it).
type availabilityTierJSON struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Price        int64   `json:"price"`
	Currency     string  `json:"currency"`
	QtyTotal     int     `json:"qty_total"`
	QtySold      int     `json:"qty_sold"`
	QtyAvailable int     `json:"qty_available"`
	SoldOut      bool    `json:"sold_out"`
	SalesStartAt *string `json:"sales_start_at"`
	SalesEndAt   *string `json:"sales_end_at"`
	IsOnSale     bool    `json:"is_on_sale"`
}

type availabilityJSON struct {
	EventID        string                 `json:"event_id"`
	Status         string                 `json:"status"`
	HasSeating     bool                   `json:"has_seating"`
	SalesStartAt   *string                `json:"sales_start_at"`
	SalesEndAt     *string                `json:"sales_end_at"`
	IsSalesOpen    bool                   `json:"is_sales_open"`
	Currency       string                 `json:"currency"`
	MinPrice       *int64                 `json:"min_price"`
	MaxPrice       *int64                 `json:"max_price"`
	TotalAvailable int                    `json:"total_available"`
	SoldOut        bool                   `json:"sold_out"`
	Zones          []availabilityZoneJSON `json:"zones"`
	Tiers          []availabilityTierJSON `json:"tiers"`
}

// zoneCounts sums the tiers of a zone: a seated zone's seats, a standing zone's tiers.
func zoneCounts(v *ticketing.EventView, zoneID string) (capacity, available int) {
	for i := range v.Event.Tiers {
		t := &v.Event.Tiers[i]
		if t.ZoneID != zoneID {
			continue
		}
		c := v.Stock.TierCount(v.Event, t, v.OccurrenceID, v.Now)
		capacity += c.Total
		available += c.Available
	}
	return capacity, available
}

func renderAvailability(v *ticketing.EventView) availabilityJSON {
	e := v.Event
	occ := v.OccurrenceID
	a := availabilityJSON{
		EventID: e.ID, Status: string(e.Status), HasSeating: e.HasSeating,
		SalesStartAt: tsPtr(e.SalesStartAt), SalesEndAt: tsPtr(e.SalesEndAt),
		IsSalesOpen: e.IsSalesOpen(occ, v.Now), Currency: e.Currency,
		MinPrice: e.MinPrice(), MaxPrice: e.MaxPrice(), Tiers: []availabilityTierJSON{},
	}
	for i := range e.Tiers {
		t := renderTier(v, &e.Tiers[i])
		a.TotalAvailable += t.QtyAvailable
		a.Tiers = append(a.Tiers, t.availabilityTierJSON)
	}
	a.SoldOut = a.TotalAvailable == 0
	if e.HasSeating {
		a.Zones = []availabilityZoneJSON{}
		for _, z := range e.Zones {
			c, av := zoneCounts(v, z.ID)
			a.Zones = append(a.Zones, availabilityZoneJSON{ID: z.ID, Name: z.Name, Type: string(z.Type), Capacity: &c, Available: &av, SoldOut: av == 0})
		}
	}
	return a
}

// Seating (contract section 2, SeatingResponse).

type seatingLayoutJSON struct {
	ID            string          `json:"id"`
	Width         float64         `json:"width"`
	Height        float64         `json:"height"`
	BackgroundURL *string         `json:"background_url"`
	Decorations   json.RawMessage `json:"decorations"`
}

type primaryTierJSON struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Price           int64  `json:"price"`
	Currency        string `json:"currency"`
	PersonsIncluded int    `json:"persons_included"`
}

// standingTierJSON is a primary tier's members, then the standing tier's own.
type standingTierJSON struct {
	primaryTierJSON
	Color     string `json:"color"`
	Available int    `json:"available"`
	SoldOut   bool   `json:"sold_out"`
}

type seatJSON struct {
	ID           string  `json:"id"`
	Label        string  `json:"label"`
	X            float64 `json:"x"`
	Y            float64 `json:"y"`
	Rotation     float64 `json:"rotation"`
	Status       string  `json:"status"`
	TicketTierID *string `json:"ticket_tier_id"`
	Price        *int64  `json:"price"`
	Color        string  `json:"color"`
}

type seatingZoneJSON struct {
	ID            string             `json:"id"`
	Name          string             `json:"name"`
	Type          string             `json:"type"`
	Color         string             `json:"color"`
	Shape         json.RawMessage    `json:"shape"`
	SortOrder     float64            `json:"sort_order"`
	Capacity      *int               `json:"capacity"`
	Available     *int               `json:"available"`
	SoldOut       bool               `json:"sold_out"`
	PrimaryTier   *primaryTierJSON   `json:"primary_tier"`
	StandingTiers []standingTierJSON `json:"standing_tiers"`
	Seats         []seatJSON         `json:"seats"`
}

type legendJSON struct {
	TierID   string `json:"tier_id"`
	Color    string `json:"color"`
	Label    string `json:"label"`
	Price    int64  `json:"price"`
	Currency string `json:"currency"`
}

type seatingJSON struct {
	EventID    string             `json:"event_id"`
	HasSeating bool               `json:"has_seating"`
	Layout     *seatingLayoutJSON `json:"layout"`
	Zones      []seatingZoneJSON  `json:"zones"`
	Legend     []legendJSON       `json:"legend"`
}

func rawOrNull(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage("null")
	}
	return m
}

// renderSeating renders the map; a zoneID renders the seats of that zone
// only (the other zones' seats are null, as a standing zone's).
func renderSeating(v *ticketing.EventView, zoneID string) seatingJSON {
	e := v.Event
	out := seatingJSON{EventID: e.ID, HasSeating: e.HasSeating && e.Seating != nil, Zones: []seatingZoneJSON{}, Legend: []legendJSON{}}
	if e.Seating == nil {
		return out
	}
	st := e.Seating
	out.Layout = &seatingLayoutJSON{ID: st.LayoutID, Width: st.Width, Height: st.Height, BackgroundURL: st.BackgroundURL, Decorations: rawOrNull(st.Decorations)}
	for _, z := range st.Zones {
		zj := seatingZoneJSON{ID: z.ID, Name: z.Name, Type: string(z.Type), Color: z.Color, Shape: rawOrNull(z.Shape), SortOrder: z.SortOrder}
		c, av := zoneCounts(v, z.ID)
		zj.Capacity, zj.Available, zj.SoldOut = &c, &av, av == 0
		if z.Type == ticketing.ZoneSeated {
			if t, ok := e.Tier(z.PrimaryTierID); ok {
				pt := renderPrimaryTier(e, t)
				zj.PrimaryTier = &pt
			}
			if zoneID == "" || zoneID == z.ID {
				zj.Seats = make([]seatJSON, 0, len(z.Seats))
				for _, s := range z.Seats {
					zj.Seats = append(zj.Seats, renderSeat(v, &z, s))
				}
			}
		} else {
			zj.StandingTiers = []standingTierJSON{}
			for i := range e.Tiers {
				t := &e.Tiers[i]
				if t.ZoneID != z.ID {
					continue
				}
				tc := v.Stock.TierCount(e, t, v.OccurrenceID, v.Now)
				zj.StandingTiers = append(zj.StandingTiers, standingTierJSON{primaryTierJSON: renderPrimaryTier(e, t),
					Color: t.Color, Available: tc.Available, SoldOut: tc.SoldOut()})
			}
		}
		out.Zones = append(out.Zones, zj)
	}
	for _, t := range e.Tiers {
		if t.ZoneID == "" {
			continue
		}
		out.Legend = append(out.Legend, legendJSON{TierID: t.ID, Color: t.Color, Label: t.Name, Price: t.Price, Currency: e.Currency})
	}
	return out
}

func renderPrimaryTier(e *ticketing.Event, t *ticketing.Tier) primaryTierJSON {
	return primaryTierJSON{ID: t.ID, Name: t.Name, Price: t.Price, Currency: e.Currency, PersonsIncluded: t.PersonsIncluded}
}

// unsellableSeatColor marks seats without a tier.
const unsellableSeatColor = "#9E9E9E"

func renderSeat(v *ticketing.EventView, z *ticketing.Zone, s ticketing.Seat) seatJSON {
	sj := seatJSON{ID: s.ID, Label: s.Label, X: s.X, Y: s.Y, Rotation: s.Rotation, Status: "available", Color: unsellableSeatColor}
	tierID := s.TierID
	if tierID == "" {
		tierID = z.PrimaryTierID
	}
	t, ok := v.Event.Tier(tierID)
	if !ok {
		sj.Status = "unavailable"
		return sj
	}
	id, price := t.ID, t.Price
	sj.TicketTierID, sj.Price, sj.Color = &id, &price, t.Color
	if v.Stock.SeatTaken(v.OccurrenceID, s.ID, v.Now) {
		sj.Status = "unavailable"
	}
	return sj
}

// Orders (contract section 2, OrderStatus and OrderStatusWithPII).

// orderStatusJSON is the contract's OrderStatus: the WebhookOrder that webhooks
// carry, then the API's additions and, for secret keys holding orders:read,
// the buyer (OrderStatusWithPII).
type orderStatusJSON struct {
	ticketing.WebhookOrder
	orderAdditionsJSON
}

type orderAdditionsJSON struct {
	OccurrenceID *string          `json:"occurrence_id"`
	ExpiresAt    *string          `json:"expires_at"`
	LatePayment  *latePaymentJSON `json:"late_payment,omitempty"`
	Buyer        *ticketing.Buyer `json:"buyer,omitempty"`
	// Email is the buyer's emails (GET /orders/{id}, with buyer only).
	Email *[]emailjobs.JobView `json:"email,omitempty"`
}

// latePaymentJSON is money that reached the order after it was cancelled
// (an addition to the contract's OrderStatus; docs/live-payments.md, "Late payments").
type latePaymentJSON struct {
	Outcome     string  `json:"outcome"`
	DetectedAt  string  `json:"detected_at"`
	CancelledAt *string `json:"cancelled_at"`
	RefundedAt  *string `json:"refunded_at"`
}

// MarshalJSON writes the WebhookOrder's members exactly as a webhook does (its
// own MarshalJSON would otherwise be promoted and drop the additions), then
// the additions' members.
func (o orderStatusJSON) MarshalJSON() ([]byte, error) {
	order, err := json.Marshal(o.WebhookOrder)
	if err != nil {
		return nil, err
	}
	more, err := json.Marshal(o.orderAdditionsJSON)
	if err != nil {
		return nil, err
	}
	// Both are objects with members: {...order...} + {...more...}.
	return append(append(order[:len(order)-1], ','), more[1:]...), nil
}

func renderOrder(o *ticketing.Order, pii bool) orderStatusJSON {
	out := orderStatusJSON{WebhookOrder: o.Webhook()}
	out.OccurrenceID = strPtr(o.OccurrenceID)
	if o.Status == ticketing.OrderPending {
		out.ExpiresAt = tsPtr(&o.ExpiresAt)
	}
	if lp := o.LatePayment; lp != nil {
		out.LatePayment = &latePaymentJSON{Outcome: lp.Outcome, DetectedAt: ts(lp.DetectedAt),
			CancelledAt: tsPtr(lp.CancelledAt), RefundedAt: tsPtr(lp.RefundedAt)}
	}
	if pii {
		b := o.Buyer
		out.Buyer = &b
	}
	return out
}
