package ticketing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tix/internal/clock"
)

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

// price resolves the selection against the catalog: the event, occurrence,
// lines at catalog prices and the promo code. It reads, never writes.
func (s *Pricing) price(ctx context.Context, c Caller, req *OrderRequest, now time.Time) (*Priced, error) {
	eventID, holds, err := s.selectedEvent(ctx, c, req)
	if err != nil {
		return nil, err
	}
	e, err := s.pricedEvent(ctx, c, eventID)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) && ce.Code == CodeNotFound && req.EventID != nil {
			ce.Param = "event_id"
		}
		return nil, err
	}
	p := &Priced{Event: e, OccurrenceID: NoOccurrence, holds: holds}
	if len(holds) > 0 {
		err = p.seatLines(*req.SeatReservationIDs, req.OccurrenceID)
	} else {
		err = p.tierLines(req)
	}
	if err != nil {
		return nil, err
	}
	for _, l := range p.Lines {
		p.Quantity += l.Quantity
		p.BasePrice += l.UnitPrice * int64(l.Quantity)
	}
	p.Total = p.BasePrice
	if req.PromoCode != nil {
		if err := s.applyPromo(ctx, c, p, *req.PromoCode, now); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// selectedEvent finds the one event of the selection: event_id, the event of
// the reservations' holds (read here, and returned), or the event of the tiers.
func (s *Pricing) selectedEvent(ctx context.Context, c Caller, req *OrderRequest) (string, []*Hold, error) {
	eventID := ""
	if req.EventID != nil {
		eventID = *req.EventID
	}
	if req.SeatReservationIDs == nil {
		if eventID != "" {
			return eventID, nil, nil
		}
		eventID, err := s.tiersEvent(ctx, c, req)
		return eventID, nil, err
	}
	holds, err := s.reservationHolds(ctx, c, *req.SeatReservationIDs)
	if err != nil {
		return "", nil, err
	}
	for _, h := range holds {
		if eventID != "" && h.EventID != eventID {
			if req.EventID != nil {
				return "", nil, &Error{Code: CodeUnsupported, Param: "seat_reservation_ids", Message: "all items of an order must belong to one event; these reservations are for another event than event_id"}
			}
			return "", nil, &Error{Code: CodeUnsupported, Param: "seat_reservation_ids", Message: "all items of an order must belong to one event; these reservations span several events"}
		}
		eventID = h.EventID
	}
	return eventID, holds, nil
}

// tiersEvent finds the event of the selected tiers, which must be one event of
// the caller's organizer.
func (s *Pricing) tiersEvent(ctx context.Context, c Caller, req *OrderRequest) (string, error) {
	var tierIDs []string
	if req.TierID != nil {
		tierIDs = []string{*req.TierID}
	} else {
		for _, it := range *req.StandingItems {
			tierIDs = append(tierIDs, *it.TierID)
		}
	}
	eventID := ""
	for i, tid := range tierIDs {
		org, ev, err := s.tierEvent(ctx, tid)
		if isNotFound(err) || (err == nil && org != c.OrganizerID) {
			return "", tierNotFound(req, i, tid)
		}
		if err != nil {
			return "", err
		}
		if eventID != "" && ev != eventID {
			return "", &Error{Code: CodeUnsupported, Param: tierParam(req, i), Message: "all items of an order must belong to one event"}
		}
		eventID = ev
	}
	return eventID, nil
}

// seatLines prices one line per reserved seat, all of one occurrence.
func (p *Priced) seatLines(rids []string, occurrenceID *string) error {
	occ := p.holds[0].OccurrenceID
	for _, h := range p.holds {
		if h.OccurrenceID != occ {
			return &Error{Code: CodeUnsupported, Param: "seat_reservation_ids", Message: "all seats of an order must be for one occurrence"}
		}
	}
	if occurrenceID != nil && *occurrenceID != occ {
		return Invalid("occurrence_id", "occurrence_id differs from the occurrence the seats were held for")
	}
	p.OccurrenceID = occ
	for i, rid := range rids {
		h := holdOf(p.holds, rid)
		hs, _ := h.Seat(rid)
		t, ok := p.Event.Tier(hs.TierID)
		if !ok {
			return &Error{Code: CodeSalesClosed, Param: fmt.Sprintf("seat_reservation_ids[%d]", i), Message: "the seat's tier is no longer sold"}
		}
		p.Lines = append(p.Lines, OrderLine{
			TierID: t.ID, TierName: t.Name, UnitPrice: t.Price, Quantity: 1, Seated: true,
			Seat:          &SeatRef{SeatID: hs.SeatID, Label: hs.Label, ZoneName: hs.ZoneName, Row: hs.Row, Number: hs.Number, Block: hs.Block},
			ReservationID: rid, HoldID: h.ID,
		})
	}
	return nil
}

// tierLines prices a quantity of a general-admission or standing tier, or
// one line per standing item.
func (p *Priced) tierLines(req *OrderRequest) error {
	occ, err := resolveOccurrence(p.Event, req.OccurrenceID)
	if err != nil {
		return err
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
		t, ok := p.Event.Tier(w.id)
		if !ok {
			return tierNotFound(req, i, w.id)
		}
		if t.Seated {
			return Invalid(tierParam(req, i), "tier %s is seated: hold seats with POST /seat-holds and order them with seat_reservation_ids", t.ID)
		}
		if req.StandingItems != nil && t.ZoneID == "" {
			return Invalid(tierParam(req, i), "tier %s is general admission, not standing: order it with tier_id and quantity", t.ID)
		}
		// tier_id + quantity of a standing tier means the one-item
		// standing_items it is: the same line.
		p.Lines = append(p.Lines, OrderLine{TierID: t.ID, TierName: t.Name, UnitPrice: t.Price, Quantity: w.qty})
	}
	return nil
}

// applyPromo discounts the lines the code applies to; a code that cannot be
// applied gets the one promoRejected answer.
func (s *Pricing) applyPromo(ctx context.Context, c Caller, p *Priced, code string, now time.Time) error {
	promo, ok := p.Event.Promo(code)
	if !ok || !promo.Active(now) {
		return promoRejected()
	}
	var eligible int64
	for _, l := range p.Lines {
		if promo.AppliesTo(l.TierID) {
			eligible += l.UnitPrice * int64(l.Quantity)
		}
	}
	if eligible == 0 {
		return promoRejected()
	}
	if promo.MaxUses > 0 {
		used, err := s.Catalog.PromoUses(ctx, p.Event, c.Environment, promo)
		if err != nil {
			return err
		}
		if used >= promo.MaxUses {
			return promoRejected()
		}
	}
	p.promo = promo
	p.Discount = promo.Discount(eligible)
	p.Total = p.BasePrice - p.Discount
	p.Promo = &AppliedPromo{Code: promo.Code, Type: promo.Type, Value: promo.Value, Discount: p.Discount, Limited: promo.MaxUses > 0}
	return nil
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

// reservationHolds loads the holds of the reservations; another tenant's, one
// made with a publishable key from another key or client network (boundTo),
// or an unknown reservation is 404 with its index: the same answer, so that a
// reservation id seen elsewhere tells nothing.
func (s *Pricing) reservationHolds(ctx context.Context, c Caller, rids []string) ([]*Hold, error) {
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
			if h, err = s.HoldStore.GetHold(ctx, hid); isNotFound(err) {
				return nil, notFound()
			} else if err != nil {
				return nil, err
			}
			if !h.owned(c) || !h.boundTo(c) {
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
func (s *Pricing) Preview(ctx context.Context, c Caller, req OrderRequest) (*Priced, error) {
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
	if err := c.admit(ctx); err != nil {
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
