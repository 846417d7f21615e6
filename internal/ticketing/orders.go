package ticketing

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"tix/internal/clock"
)

// StandingItem is a quantity of a standing tier.
type StandingItem struct {
	TierID *string `json:"tier_id"`
	Qty    *int    `json:"qty"`
}

// OrderRequest is POST /orders and, without Buyer, ReturnURL and PaymentMethod,
// POST /orders/preview. Pointers tell "absent" from "empty".
type OrderRequest struct {
	Buyer              *BuyerInput     `json:"buyer,omitempty"`
	TierID             *string         `json:"tier_id,omitempty"`
	SeatReservationIDs *[]string       `json:"seat_reservation_ids,omitempty"`
	StandingItems      *[]StandingItem `json:"standing_items,omitempty"`
	EventID            *string         `json:"event_id,omitempty"`
	OccurrenceID       *string         `json:"occurrence_id,omitempty"`
	Quantity           *int            `json:"quantity,omitempty"`
	PromoCode          *string         `json:"promo_code,omitempty"`
	ReturnURL          *string         `json:"return_url,omitempty"`
	PaymentMethod      *string         `json:"payment_method,omitempty"`
}

// BuyerInput is the buyer as sent.
type BuyerInput struct {
	Email *string `json:"email,omitempty"`
	Name  *string `json:"name,omitempty"`
	Phone *string `json:"phone,omitempty"`
}

// Priced is an order as priced from the catalog, before it is written.
type Priced struct {
	Event        *Event
	OccurrenceID string // NoOccurrence for a single event
	Lines        []OrderLine
	Quantity     int
	BasePrice    int64
	Discount     int64
	Total        int64
	Promo        *AppliedPromo
	promo        *Promo
	holds        []*Hold // the holds of seat_reservation_ids, as read when pricing
}

// validateSelection applies the 400 rules shared by preview and create.
func validateSelection(req *OrderRequest) error {
	given := []string{}
	if req.TierID != nil {
		given = append(given, "tier_id")
	}
	if req.SeatReservationIDs != nil {
		given = append(given, "seat_reservation_ids")
	}
	if req.StandingItems != nil {
		given = append(given, "standing_items")
	}
	switch len(given) {
	case 0:
		return Invalid("tier_id", "exactly one selection is required: tier_id (with quantity), seat_reservation_ids or standing_items")
	case 1:
	default:
		return Invalid(given[1], "exactly one selection is allowed, got %s", strings.Join(given, " and "))
	}
	if req.Quantity != nil && req.TierID == nil {
		return Invalid("quantity", "quantity goes with tier_id; seat orders count their reservations and standing items carry qty")
	}
	if req.EventID != nil && *req.EventID == "" {
		return Invalid("event_id", "event_id must not be empty")
	}
	if req.OccurrenceID != nil && *req.OccurrenceID == "" {
		return Invalid("occurrence_id", "occurrence_id must not be empty; omit it for a single event")
	}
	if req.PromoCode != nil && strings.TrimSpace(*req.PromoCode) == "" {
		return Invalid("promo_code", "promo_code must not be empty; omit it to order without a code")
	}
	switch {
	case req.TierID != nil:
		if *req.TierID == "" {
			return Invalid("tier_id", "tier_id must not be empty")
		}
		if req.Quantity != nil && *req.Quantity < 1 {
			return Invalid("quantity", "quantity must be at least 1")
		}
		if req.Quantity != nil && *req.Quantity > MaxUnitsPerOrder {
			return Invalid("quantity", "at most %d tickets per order", MaxUnitsPerOrder)
		}
	case req.SeatReservationIDs != nil:
		ids := *req.SeatReservationIDs
		if len(ids) == 0 {
			return Invalid("seat_reservation_ids", "seat_reservation_ids must list at least one reservation")
		}
		if len(ids) > MaxUnitsPerOrder {
			return Invalid("seat_reservation_ids", "at most %d seats per order", MaxUnitsPerOrder)
		}
		seen := map[string]bool{}
		for i, id := range ids {
			p := fmt.Sprintf("seat_reservation_ids[%d]", i)
			if id == "" {
				return Invalid(p, "reservation id must not be empty")
			}
			if seen[id] {
				return Invalid(p, "reservation %s is listed twice", id)
			}
			seen[id] = true
		}
	default:
		items := *req.StandingItems
		if len(items) == 0 {
			return Invalid("standing_items", "standing_items must list at least one item")
		}
		total := 0
		seen := map[string]bool{}
		for i, it := range items {
			p := fmt.Sprintf("standing_items[%d]", i)
			if it.TierID == nil || *it.TierID == "" {
				return Invalid(p+".tier_id", "tier_id is required")
			}
			if seen[*it.TierID] {
				return Invalid(p+".tier_id", "tier %s is listed twice; put the whole quantity in one item", *it.TierID)
			}
			seen[*it.TierID] = true
			if it.Qty == nil {
				return Invalid(p+".qty", "qty is required")
			}
			if *it.Qty < 1 {
				return Invalid(p+".qty", "qty must be at least 1")
			}
			total += *it.Qty
			if *it.Qty > MaxUnitsPerOrder || total > MaxUnitsPerOrder {
				return Invalid(p+".qty", "at most %d tickets per order", MaxUnitsPerOrder)
			}
		}
	}
	return nil
}

func validateCreate(req *OrderRequest) (Buyer, error) {
	var b Buyer
	if req.Buyer == nil {
		return b, Invalid("buyer", "buyer is required (at least buyer.email)")
	}
	if req.Buyer.Email == nil || strings.TrimSpace(*req.Buyer.Email) == "" {
		return b, Invalid("buyer.email", "buyer.email is required")
	}
	email := strings.TrimSpace(*req.Buyer.Email)
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 || !strings.Contains(email[strings.LastIndex(email, "@"):], ".") {
		return b, Invalid("buyer.email", "buyer.email %q is not a valid email address", email)
	}
	b.Email = email
	if req.Buyer.Name != nil {
		if len(*req.Buyer.Name) > 200 {
			return b, Invalid("buyer.name", "buyer.name is longer than 200 characters")
		}
		b.Name = req.Buyer.Name
	}
	if req.Buyer.Phone != nil {
		p := strings.TrimSpace(*req.Buyer.Phone)
		if len(p) > 32 || strings.Trim(p, "+0123456789 -()") != "" {
			return b, Invalid("buyer.phone", "buyer.phone must be a phone number, E.164 recommended (+79991234567)")
		}
		b.Phone = &p
	}
	if err := validateSelection(req); err != nil {
		return b, err
	}
	if req.ReturnURL != nil {
		u, err := url.Parse(*req.ReturnURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || len(*req.ReturnURL) > 2048 {
			return b, Invalid("return_url", "return_url must be an absolute https:// URL")
		}
	}
	if req.PaymentMethod != nil && *req.PaymentMethod != "sbp" {
		return b, &Error{Code: CodeUnsupported, Param: "payment_method", Message: fmt.Sprintf("payment method %q is not supported: orders are paid by SBP only (payment_method \"sbp\")", *req.PaymentMethod)}
	}
	return b, nil
}

// price resolves the selection against the catalog: the event, occurrence,
// lines at catalog prices and the promo code. It reads, never writes.
func (s *Sales) price(ctx context.Context, c Caller, req *OrderRequest, now time.Time) (*Priced, error) {
	eventID := ""
	if req.EventID != nil {
		eventID = *req.EventID
	}
	var holds []*Hold
	if req.SeatReservationIDs != nil {
		var err error
		if holds, err = s.reservationHolds(ctx, c, *req.SeatReservationIDs); err != nil {
			return nil, err
		}
		for _, h := range holds {
			if eventID != "" && h.EventID != eventID {
				if req.EventID != nil {
					return nil, &Error{Code: CodeUnsupported, Param: "seat_reservation_ids", Message: "all items of an order must belong to one event; these reservations are for another event than event_id"}
				}
				return nil, &Error{Code: CodeUnsupported, Param: "seat_reservation_ids", Message: "all items of an order must belong to one event; these reservations span several events"}
			}
			eventID = h.EventID
		}
	} else {
		var tierIDs []string
		if req.TierID != nil {
			tierIDs = []string{*req.TierID}
		} else {
			for _, it := range *req.StandingItems {
				tierIDs = append(tierIDs, *it.TierID)
			}
		}
		if eventID == "" {
			for i, tid := range tierIDs {
				org, ev, err := s.Store.TierEvent(ctx, tid)
				if isNotFound(err) || err == nil && org != c.OrganizerID {
					return nil, tierNotFound(req, i, tid)
				}
				if err != nil {
					return nil, err
				}
				if eventID != "" && ev != eventID {
					return nil, &Error{Code: CodeUnsupported, Param: tierParam(req, i), Message: "all items of an order must belong to one event"}
				}
				eventID = ev
			}
		}
	}

	e, err := s.Store.GetEvent(ctx, c.OrganizerID, eventID, c.Environment)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) && ce.Code == CodeNotFound && req.EventID != nil {
			ce.Param = "event_id"
		}
		return nil, err
	}
	p := &Priced{Event: e, OccurrenceID: NoOccurrence, holds: holds}

	if len(holds) > 0 {
		occ := holds[0].OccurrenceID
		for _, h := range holds {
			if h.OccurrenceID != occ {
				return nil, &Error{Code: CodeUnsupported, Param: "seat_reservation_ids", Message: "all seats of an order must be for one occurrence"}
			}
		}
		if req.OccurrenceID != nil && *req.OccurrenceID != occ {
			return nil, Invalid("occurrence_id", "occurrence_id differs from the occurrence the seats were held for")
		}
		p.OccurrenceID = occ
		for i, rid := range *req.SeatReservationIDs {
			h := holdOf(holds, rid)
			hs, _ := h.Seat(rid)
			t, ok := e.Tier(hs.TierID)
			if !ok {
				return nil, &Error{Code: CodeSalesClosed, Param: fmt.Sprintf("seat_reservation_ids[%d]", i), Message: "the seat's tier is no longer sold"}
			}
			p.Lines = append(p.Lines, OrderLine{
				TierID: t.ID, TierName: t.Name, UnitPrice: t.Price, Quantity: 1, Seated: true,
				Seat:          &SeatRef{SeatID: hs.SeatID, Label: hs.Label, ZoneName: hs.ZoneName, Row: hs.Row, Number: hs.Number},
				ReservationID: rid, HoldID: h.ID,
			})
		}
	} else {
		occ, err := resolveOccurrence(e, req.OccurrenceID)
		if err != nil {
			return nil, err
		}
		p.OccurrenceID = occ
		type want struct {
			id  string
			qty int
		}
		var wants []want
		if req.TierID != nil {
			q := 1
			if req.Quantity != nil {
				q = *req.Quantity
			}
			wants = []want{{*req.TierID, q}}
		} else {
			for _, it := range *req.StandingItems {
				wants = append(wants, want{*it.TierID, *it.Qty})
			}
		}
		for i, w := range wants {
			t, ok := e.Tier(w.id)
			if !ok {
				return nil, tierNotFound(req, i, w.id)
			}
			if t.Seated {
				return nil, Invalid(tierParam(req, i), "tier %s is seated: hold seats with POST /seat-holds and order them with seat_reservation_ids", t.ID)
			}
			if req.StandingItems != nil && t.ZoneID == "" {
				return nil, Invalid(tierParam(req, i), "tier %s is general admission, not standing: order it with tier_id and quantity", t.ID)
			}
			// tier_id + quantity of a standing tier means the one-item
			// standing_items it is: the same line.
			p.Lines = append(p.Lines, OrderLine{TierID: t.ID, TierName: t.Name, UnitPrice: t.Price, Quantity: w.qty})
		}
	}
	for _, l := range p.Lines {
		p.Quantity += l.Quantity
		p.BasePrice += l.UnitPrice * int64(l.Quantity)
	}
	p.Total = p.BasePrice
	if req.PromoCode != nil {
		promo, ok := e.Promo(*req.PromoCode)
		if !ok || !promo.Active(now) {
			return nil, promoRejected()
		}
		var eligible int64
		for _, l := range p.Lines {
			if promo.AppliesTo(l.TierID) {
				eligible += l.UnitPrice * int64(l.Quantity)
			}
		}
		if eligible == 0 {
			return nil, promoRejected()
		}
		if promo.MaxUses > 0 {
			used, err := s.Store.PromoUses(ctx, e.ID, c.Environment, promo.Code)
			if err != nil {
				return nil, err
			}
			if used >= promo.MaxUses {
				return nil, promoRejected()
			}
		}
		p.promo = promo
		p.Discount = promo.Discount(eligible)
		p.Total = p.BasePrice - p.Discount
		p.Promo = &AppliedPromo{Code: promo.Code, Type: promo.Type, Value: promo.Value, Discount: p.Discount, Limited: promo.MaxUses > 0}
	}
	return p, nil
}

// promoRejected is the one answer to a promo code that is unknown, not yet or
// no longer valid, used up, or not for the selected tickets: telling these apart
// would tell a guesser which codes exist.
func promoRejected() error {
	return Invalid("promo_code", "this promo code cannot be applied to this order")
}

func tierParam(req *OrderRequest, i int) string {
	if req.TierID != nil {
		return "tier_id"
	}
	return fmt.Sprintf("standing_items[%d].tier_id", i)
}

func tierNotFound(req *OrderRequest, i int, id string) error {
	err := NotFound("tier " + id)
	err.Param = tierParam(req, i)
	return err
}

func holdOf(holds []*Hold, rid string) *Hold {
	hid, _ := HoldIDOfReservation(rid)
	for _, h := range holds {
		if h.ID == hid {
			return h
		}
	}
	return nil
}

// reservationHolds loads the holds of the reservations; another tenant's or an
// unknown reservation is 404 with its index.
func (s *Sales) reservationHolds(ctx context.Context, c Caller, rids []string) ([]*Hold, error) {
	var holds []*Hold
	for i, rid := range rids {
		notFound := func() error {
			err := NotFound("seat reservation " + rid)
			err.Param = fmt.Sprintf("seat_reservation_ids[%d]", i)
			return err
		}
		hid, ok := HoldIDOfReservation(rid)
		if !ok {
			return nil, notFound()
		}
		h := holdOf(holds, rid)
		if h == nil {
			var err error
			if h, err = s.Store.GetHold(ctx, hid); isNotFound(err) {
				return nil, notFound()
			} else if err != nil {
				return nil, err
			}
			if !h.owned(c) {
				return nil, notFound()
			}
			holds = append(holds, h)
		}
		if _, ok := h.Seat(rid); !ok {
			return nil, notFound()
		}
	}
	return holds, nil
}

// checkReservationsLive refuses an order from a reservation whose hold has
// expired, whether or not someone took the seat since: the order must be
// created before the hold's expires_at (409 seat_conflict naming it). A
// released or used reservation is refused by the order's transaction, which
// takes a seat only from the live hold of its reservation; this check gives
// the expired case its own message and does not replace that condition.
func checkReservationsLive(p *Priced, now time.Time) error {
	for i, l := range p.Lines {
		if l.ReservationID == "" {
			continue
		}
		h := holdOf(p.holds, l.ReservationID)
		if h != nil && !now.Before(h.ExpiresAt) {
			return &Error{Code: CodeSeatConflict, Param: "seat_reservation_ids",
				Message: fmt.Sprintf("seat_reservation_ids[%d]: reservation %s of seat %s (%s) has ended: its hold expired at %s; hold the seat again",
					i, l.ReservationID, l.Seat.SeatID, l.Seat.Label, clock.Format(h.ExpiresAt))}
		}
	}
	return nil
}

// resolveOccurrence checks occurrence_id against the event (no sales checks).
func resolveOccurrence(e *Event, occurrenceID *string) (string, error) {
	if len(e.Occurrences) == 0 {
		if occurrenceID != nil {
			return "", Invalid("occurrence_id", "event %s has no occurrences; omit occurrence_id", e.ID)
		}
		return NoOccurrence, nil
	}
	if occurrenceID == nil {
		return "", Invalid("occurrence_id", "event %s has several dates: occurrence_id is required", e.ID)
	}
	if _, ok := e.Occurrence(*occurrenceID); !ok {
		err := NotFound("occurrence " + *occurrenceID + " of this event")
		err.Param = "occurrence_id"
		return "", err
	}
	return *occurrenceID, nil
}

// Preview prices an order without creating anything.
func (s *Sales) Preview(ctx context.Context, c Caller, req OrderRequest) (*Priced, error) {
	if req.Buyer != nil || req.ReturnURL != nil || req.PaymentMethod != nil {
		switch {
		case req.Buyer != nil:
			return nil, Invalid("buyer", "buyer is not part of a preview")
		case req.ReturnURL != nil:
			return nil, Invalid("return_url", "return_url is not part of a preview")
		default:
			return nil, Invalid("payment_method", "payment_method is not part of a preview")
		}
	}
	if err := validateSelection(&req); err != nil {
		return nil, err
	}
	if err := s.admitPromoTry(ctx, c); err != nil {
		return nil, err
	}
	return s.price(ctx, c, &req, s.now())
}

// checkSellable applies the 410 and 422 rules of order creation to a priced order.
func checkSellable(p *Priced, now time.Time) error {
	e := p.Event
	if len(e.Occurrences) > 0 {
		if o, _ := e.Occurrence(p.OccurrenceID); o != nil && o.Status == OccurrenceCancelled {
			return &Error{Code: CodeSalesClosed, Param: "occurrence_id", Message: "this occurrence is cancelled"}
		}
	}
	if !e.IsSalesOpen(occOrEmpty(p.OccurrenceID), now) {
		return &Error{Code: CodeSalesClosed, Message: fmt.Sprintf("sales for event %s are not open (not started, ended, or the event is unavailable)", e.ID)}
	}
	for _, l := range p.Lines {
		t, _ := e.Tier(l.TierID)
		if !e.TierOnSale(t, occOrEmpty(p.OccurrenceID), now) {
			return &Error{Code: CodeSalesClosed, Message: fmt.Sprintf("tier %q is not on sale now", t.Name)}
		}
		if l.UnitPrice == 0 {
			return &Error{Code: CodeUnsupported, Message: fmt.Sprintf("tier %q is free: free tickets cannot be ordered through the API", t.Name)}
		}
	}
	if p.Total <= 0 {
		return &Error{Code: CodeUnsupported, Param: "promo_code", Message: "the order total is zero: free orders cannot be paid by SBP"}
	}
	return nil
}
