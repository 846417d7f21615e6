package ticketing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Hold is a set of seats of one event (occurrence) kept for a buyer until
// ExpiresAt. Each seat has its own reservation id.
type Hold struct {
	ID             string      `json:"id"`
	OrganizerID    string      `json:"organizer_id"`
	Environment    Environment `json:"environment"`
	KeyID          string      `json:"key_id"`
	EventID        string      `json:"event_id"`
	OccurrenceID   string      `json:"occurrence_id"` // NoOccurrence for a single event
	Seats          []HoldSeat  `json:"seats"`
	TotalBasePrice int64       `json:"total_base_price"`
	CreatedAt      time.Time   `json:"created_at"`
	ExpiresAt      time.Time   `json:"expires_at"`
	IPKey          string      `json:"ip_key,omitempty"` // per-IP record of a publishable-key hold
	// ClientCap (a publishable key's hold) is the client's per-event count
	// its seats are taken from (see ClientCap).
	ClientCap *ClientCap `json:"client_cap,omitempty"`
}

// HoldSeat is one held seat.
type HoldSeat struct {
	ReservationID string  `json:"reservation_id"`
	SeatID        string  `json:"seat_id"`
	Label         string  `json:"label"`
	Row           *string `json:"row,omitempty"`
	Number        *int    `json:"number,omitempty"`
	ZoneName      string  `json:"zone_name"`
	ZoneColor     string  `json:"zone_color"`
	TierID        string  `json:"tier_id"`
	TierName      string  `json:"tier_name"`
	Price         int64   `json:"price"`
	// Block is the seat's stock partition (Event.SeatBlock); 0 also for
	// seats of the one-partition layout.
	Block int `json:"block,omitempty"`
}

// HoldRequest is POST /seat-holds.
type HoldRequest struct {
	EventID      *string  `json:"event_id"`
	OccurrenceID *string  `json:"occurrence_id"`
	SeatIDs      []string `json:"seat_ids"`
	// BestAvailable asks for the best free seats of a tier instead of SeatIDs.
	BestAvailable *BestAvailable `json:"best_available,omitempty"`
}

// bestQuantity is how many seats best_available asks for (0: none).
func (r HoldRequest) bestQuantity() int {
	if r.BestAvailable == nil || r.BestAvailable.Quantity == nil {
		return 0
	}
	return *r.BestAvailable.Quantity
}

// reservationID names seat i of a hold; the hold id can be read back from it.
func reservationID(holdID string, i int) string {
	return "rsv_" + strings.TrimPrefix(holdID, "hold_") + fmt.Sprintf("%02d", i)
}

// HoldIDOfReservation returns the hold a reservation id belongs to.
func HoldIDOfReservation(rid string) (string, bool) {
	body, ok := strings.CutPrefix(rid, "rsv_")
	if !ok || len(body) != holdIDLen+2 {
		return "", false
	}
	return "hold_" + body[:holdIDLen], true
}

const holdIDLen = 20

// Seat returns the seat of reservation rid.
func (h *Hold) Seat(rid string) (HoldSeat, bool) {
	for _, s := range h.Seats {
		if s.ReservationID == rid {
			return s, true
		}
	}
	return HoldSeat{}, false
}

func (h *Hold) owned(c Caller) bool {
	return h.OrganizerID == c.OrganizerID && h.Environment == c.Environment
}

// boundTo reports whether c may use or release h's reservations beyond the
// tenant check: a hold made with a publishable key is bound, like that key's
// Idempotency-Keys, to the key and the client network that made it, since
// every visitor of the storefront holds the key. A secret key (the
// organizer's servers) may order any hold of its tenant.
func (h *Hold) boundTo(c Caller) bool {
	if h.IPKey == "" || !c.Publishable {
		return true
	}
	return h.KeyID == c.KeyID && h.IPKey == holdIPKey(c)
}

// holdIPKey names a publishable-key client's per-IP hold record.
func holdIPKey(c Caller) string {
	return c.OrganizerID + "#" + string(c.Environment) + "#" + c.IP
}

// CreateHold holds seats for the caller (contract section 4 rule 3).
func (s *Holds) CreateHold(ctx context.Context, c Caller, idemKey string, req HoldRequest) (*Hold, error) {
	if err := validateHoldRequest(req); err != nil {
		return nil, err
	}
	if err := c.admit(ctx); err != nil {
		return nil, err
	}
	now := s.now()
	ipKey, ipState, err := s.admitHoldIP(ctx, c, now)
	if err != nil {
		return nil, err
	}
	hash := requestHash(req)
	if idemKey != "" {
		if h, err := s.replayHold(ctx, c, idemKey, hash, now); h != nil || err != nil {
			return h, err
		}
	}
	e, err := s.seatedEvent(ctx, c, *req.EventID)
	if err != nil {
		if IsCode(err, CodeNotFound) {
			err.(*Error).Param = "event_id"
		}
		return nil, err
	}
	occ, err := sellingOccurrence(e, req.OccurrenceID, now)
	if err != nil {
		return nil, err
	}
	h := &Hold{
		ID: newID("hold_", holdIDLen), OrganizerID: c.OrganizerID, Environment: c.Environment,
		KeyID: c.KeyID, EventID: e.ID, OccurrenceID: occ, CreatedAt: now,
		ExpiresAt: now.Add(s.Settings.HoldTTL), IPKey: ipKey,
	}
	if err := h.addSeats(e, req.SeatIDs, now); err != nil {
		return nil, err
	}
	if c.Publishable {
		h.ClientCap = s.clientCapOf(c, e.ID)
		if max(len(h.Seats), req.bestQuantity()) > h.ClientCap.MaxUnits {
			return nil, s.clientCapError(h.ClientCap)
		}
	}
	var idem *Idempotency
	if idemKey != "" {
		idem = &Idempotency{Tenant: c.Tenant, Scope: c.idemScope(IdemHold), Key: idemKey, RequestHash: hash,
			ResourceID: h.ID, LeaseUntil: h.ExpiresAt, CreatedAt: now}
	}
	if req.BestAvailable != nil {
		err = s.holdBestAvailable(ctx, h, e, req.BestAvailable, idem, ipState, now)
	} else {
		err = s.writeHold(ctx, h, idem, ipState, now)
	}
	var se *StockError
	switch {
	case err == nil:
		return h, nil
	case errors.As(err, &se):
		seat := h.Seats[se.Index]
		return nil, &Error{Code: CodeSeatConflict, Param: fmt.Sprintf("seat_ids[%d]", se.Index),
			Message: fmt.Sprintf("seat %s (%s) is no longer available; choose another seat", seat.SeatID, seat.Label)}
	case errors.Is(err, ErrIdempotencyTaken):
		// An identical request won the race: answer with its hold.
		if h, err := s.replayHold(ctx, c, idemKey, hash, now); h != nil || err != nil {
			return h, err
		}
		return nil, Errorf(CodeConflict, "a request with this Idempotency-Key is in flight; retry shortly")
	case errors.Is(err, ErrIPRace):
		return nil, &Error{Code: CodeRateLimited, RetryAfter: time.Second, Message: "too many concurrent seat-hold requests from this IP address; retry shortly"}
	case errors.Is(err, ErrClientCap):
		return nil, s.clientCapError(h.ClientCap)
	}
	return nil, err
}

// admitHoldIP counts a publishable key's hold request against its client IP's
// budget and returns the IP's record key and state (none for a secret key).
func (s *Holds) admitHoldIP(ctx context.Context, c Caller, now time.Time) (string, *HoldIPState, error) {
	if !c.Publishable {
		return "", nil, nil
	}
	ipKey := holdIPKey(c)
	st, ok, reset, err := s.Limits.AdmitHoldIP(ctx, ipKey, s.Settings.HoldIPRate, s.Settings.HoldIPWindow, now)
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return "", nil, &Error{Code: CodeRateLimited, RetryAfter: reset.Sub(now),
			Message: fmt.Sprintf("too many seat-hold requests from this IP address (at most %d per %s); retry after the Retry-After delay", s.Settings.HoldIPRate, s.Settings.HoldIPWindow)}
	}
	return ipKey, &st, nil
}

// addSeats resolves the requested seats in the event's seating map, each at
// its tier's catalog price, refusing a seat whose tier is not on sale now.
func (h *Hold) addSeats(e *Event, seatIDs []string, now time.Time) error {
	seats := seatIndex(e)
	for i, id := range seatIDs {
		st, ok := seats[id]
		if !ok {
			err := NotFound("seat " + id + " of this event")
			err.Param = fmt.Sprintf("seat_ids[%d]", i)
			return err
		}
		t, ok := e.Tier(st.tierID)
		if !ok {
			return fmt.Errorf("seat %s has no tier %s", id, st.tierID)
		}
		if !e.TierOnSale(t, occOrEmpty(h.OccurrenceID), now) {
			return &Error{Code: CodeSalesClosed, Param: fmt.Sprintf("seat_ids[%d]", i),
				Message: fmt.Sprintf("tier %q of seat %s is not on sale now", t.Name, st.seat.Label)}
		}
		h.Seats = append(h.Seats, HoldSeat{
			ReservationID: reservationID(h.ID, i), SeatID: id, Label: st.seat.Label,
			Row: st.seat.Row, Number: st.seat.Number, ZoneName: st.zone.Name, ZoneColor: st.zone.Color,
			TierID: t.ID, TierName: t.Name, Price: t.Price, Block: e.SeatBlock(id),
		})
		h.TotalBasePrice += t.Price
	}
	return nil
}

// writeHold writes the hold, rereading the per-IP record and trying again
// (a few times) when another hold of the same IP changed it meanwhile.
func (s *Holds) writeHold(ctx context.Context, h *Hold, idem *Idempotency, ipState *HoldIPState, now time.Time) error {
	freed := false
	for attempt := 0; ; attempt++ {
		var ip *HoldIPUpdate
		if ipState != nil {
			var err error
			if ip, err = s.ipUpdate(h.IPKey, *ipState, h, now); err != nil {
				return err
			}
		}
		err := s.HoldStore.CreateHold(ctx, h, idem, ip, now)
		if errors.Is(err, ErrClientCap) && !freed {
			// Once: the client's overdue orders and expired holds give their units back.
			freed = true
			if s.orders.freeClientOverdue(ctx, h.ClientCap.Key, now) {
				continue
			}
		}
		if !errors.Is(err, ErrIPRace) || attempt >= 4 {
			return err
		}
		st, err := s.Limits.GetHoldIP(ctx, h.IPKey)
		if err != nil {
			return err
		}
		ipState = &st
	}
}

func (s *Holds) ipUpdate(key string, st HoldIPState, h *Hold, now time.Time) (*HoldIPUpdate, error) {
	u := &HoldIPUpdate{Key: key, Version: st.Version, Add: h.ID, Until: h.ExpiresAt}
	live := 0
	var earliest time.Time
	for id, until := range st.Holds {
		if !now.Before(until) {
			u.Remove = append(u.Remove, id)
			continue
		}
		live++
		if earliest.IsZero() || until.Before(earliest) {
			earliest = until
		}
	}
	if live >= s.Settings.HoldIPMaxActive {
		return nil, &Error{Code: CodeRateLimited, RetryAfter: earliest.Sub(now),
			Message: fmt.Sprintf("this IP address already has %d active seat holds (the most a publishable key allows); release one or wait until one expires", live)}
	}
	return u, nil
}

// replayHold answers a retried hold request: the same live hold for the same
// request, 409 for another request under the same key, nil when there is none.
func (s *Holds) replayHold(ctx context.Context, c Caller, key, hash string, now time.Time) (*Hold, error) {
	rec, err := s.Idempotency.GetIdempotency(ctx, c.Tenant, c.idemScope(IdemHold), key)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil || !now.Before(rec.LeaseUntil) {
		return nil, err
	}
	if rec.RequestHash != hash {
		return nil, Errorf(CodeConflict, "this Idempotency-Key was used for a different seat-hold request; use a fresh key")
	}
	h, err := s.HoldStore.GetHold(ctx, rec.ResourceID)
	if isNotFound(err) {
		return nil, nil
	}
	return h, err
}

func validateHoldRequest(req HoldRequest) error {
	if req.EventID == nil || *req.EventID == "" {
		return Invalid("event_id", "event_id is required")
	}
	if req.OccurrenceID != nil && *req.OccurrenceID == "" {
		return Invalid("occurrence_id", "occurrence_id must not be empty; omit it for a single event")
	}
	if req.BestAvailable != nil {
		return validateBestAvailable(req)
	}
	if len(req.SeatIDs) == 0 {
		return Invalid("seat_ids", "seat_ids must list at least one seat, or use best_available")
	}
	if len(req.SeatIDs) > MaxSeatsPerHold {
		return Invalid("seat_ids", "at most %d seats per hold", MaxSeatsPerHold)
	}
	seen := map[string]bool{}
	for i, id := range req.SeatIDs {
		p := fmt.Sprintf("seat_ids[%d]", i)
		if id == "" {
			return Invalid(p, "seat id must not be empty")
		}
		if seen[id] {
			return Invalid(p, "seat %s is listed twice", id)
		}
		seen[id] = true
	}
	return nil
}

// sellingOccurrence checks the event sells now and resolves the occurrence key:
// NoOccurrence for a single event; the requested, scheduled occurrence otherwise.
func sellingOccurrence(e *Event, occurrenceID *string, now time.Time) (string, error) {
	occ := NoOccurrence
	if len(e.Occurrences) == 0 {
		if occurrenceID != nil {
			return "", Invalid("occurrence_id", "event %s has no occurrences; omit occurrence_id", e.ID)
		}
	} else {
		if occurrenceID == nil {
			return "", Invalid("occurrence_id", "event %s has several dates: occurrence_id is required", e.ID)
		}
		o, ok := e.Occurrence(*occurrenceID)
		if !ok {
			err := NotFound("occurrence " + *occurrenceID + " of this event")
			err.Param = "occurrence_id"
			return "", err
		}
		if o.Status == OccurrenceCancelled {
			return "", &Error{Code: CodeSalesClosed, Param: "occurrence_id", Message: "this occurrence is cancelled"}
		}
		occ = o.ID
	}
	if !e.IsSalesOpen(occOrEmpty(occ), now) {
		return "", &Error{Code: CodeSalesClosed, Message: fmt.Sprintf("sales for event %s are not open (not started, ended, or the event is unavailable)", e.ID)}
	}
	return occ, nil
}

func occOrEmpty(occ string) string {
	if occ == NoOccurrence {
		return ""
	}
	return occ
}

type seatInfo struct {
	seat   *Seat
	zone   *Zone
	tierID string
}

func seatIndex(e *Event) map[string]seatInfo {
	m := map[string]seatInfo{}
	if e.Seating == nil {
		return m
	}
	for zi := range e.Seating.Zones {
		z := &e.Seating.Zones[zi]
		for si := range z.Seats {
			st := &z.Seats[si]
			tier := st.TierID
			if tier == "" {
				tier = z.PrimaryTierID
			}
			m[st.ID] = seatInfo{seat: st, zone: z, tierID: tier}
		}
	}
	return m
}

// ReleaseHolds frees the given reservations that belong to the caller's key and
// are still held; it returns how many it released. Others are ignored.
func (s *Holds) ReleaseHolds(ctx context.Context, c Caller, reservationIDs []string) (int, error) {
	if len(reservationIDs) == 0 {
		return 0, Invalid("reservation_ids", "reservation_ids must list at least one reservation")
	}
	if len(reservationIDs) > MaxReleaseIDs {
		return 0, Invalid("reservation_ids", "at most %d reservations per request", MaxReleaseIDs)
	}
	for i, rid := range reservationIDs {
		if rid == "" {
			return 0, Invalid(fmt.Sprintf("reservation_ids[%d]", i), "reservation id must not be empty")
		}
	}
	if err := c.admit(ctx); err != nil {
		return 0, err
	}
	now := s.now()
	holds := map[string]*Hold{}
	released := 0
	freed := map[string]int{}
	seen := map[string]bool{}
	for _, rid := range reservationIDs {
		if seen[rid] {
			continue
		}
		seen[rid] = true
		hid, ok := HoldIDOfReservation(rid)
		if !ok {
			continue
		}
		h, loaded := holds[hid]
		if !loaded {
			var err error
			if h, err = s.HoldStore.GetHold(ctx, hid); isNotFound(err) {
				h = nil
			} else if err != nil {
				return released, err
			}
			holds[hid] = h
		}
		if h == nil || !h.owned(c) || h.KeyID != c.KeyID || !h.boundTo(c) {
			continue
		}
		seat, ok := h.Seat(rid)
		if !ok {
			continue
		}
		ok, err := s.HoldStore.ReleaseSeat(ctx, h, seat, now)
		if err != nil {
			return released, err
		}
		if ok {
			released++
			freed[hid]++
		}
	}
	for hid, n := range freed {
		h := holds[hid]
		if h.IPKey == "" {
			continue
		}
		if n < len(h.Seats) {
			// Part of the hold was released by this request: it stops counting
			// against its IP's cap once none of its seats is held any more (the
			// others may have been released by earlier requests).
			alive, err := s.holdAlive(ctx, h, now)
			if err != nil {
				return released, err
			}
			if alive {
				continue
			}
		}
		if err := s.Limits.ForgetHoldIP(ctx, h.IPKey, h.ID); err != nil {
			return released, err
		}
	}
	return released, nil
}

// holdAlive reports whether any seat of h is still held by it at now.
func (s *Holds) holdAlive(ctx context.Context, h *Hold, now time.Time) (bool, error) {
	// Seats only: the stock of an event without tiers is its seats (one
	// read), not the counter shards of its tiers.
	st, err := s.Catalog.StockOf(ctx, &Event{ID: h.EventID, SeatBlocks: h.seatBlockCount()}, h.Environment, h.OccurrenceID)
	if err != nil {
		return false, err
	}
	for _, seat := range h.Seats {
		ss, ok := st.Seats[StockKey{h.OccurrenceID, seat.SeatID}]
		if ok && ss.Status == SeatHeld && ss.HoldID == h.ID && ss.Taken(now) {
			return true, nil
		}
	}
	return false, nil
}
