package ticketing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// CodeHoldExpired (410) answers an extension of a hold that has expired, or
// whose reservation was released or ordered: it cannot be kept any longer.
// The contract's set of codes is open (section 7, rule 4 of section 9).
const CodeHoldExpired Code = "hold_expired"

// Hold extension defaults (TIX_HOLD_EXTEND_STEP, TIX_HOLD_MAX_LIFETIME).
const (
	DefaultHoldExtendStep  = 5 * time.Minute
	DefaultHoldMaxLifetime = 30 * time.Minute
)

// ExtendRequest is POST /seat-holds/extend.
type ExtendRequest struct {
	ReservationIDs []string `json:"reservation_ids"`
}

// ExtendHold is POST /seat-holds/extend: the listed reservations of the
// caller's live hold (all of one hold) last Settings.HoldExtendStep longer
// than the hold, up to Settings.HoldMaxLifetime after it was made; the hold
// answers with them alone (its other seats keep their expiry). They move in
// one transaction conditional on each being held by its reservation and live,
// so an extension racing the hold's expiry either extends them all or finds
// the hold expired, never both. 410 hold_expired once a listed reservation is
// no longer held; 409 conflict at the maximum lifetime.
func (s *Holds) ExtendHold(ctx context.Context, c Caller, req ExtendRequest) (*Hold, error) {
	hid, err := validateExtend(req)
	if err != nil {
		return nil, err
	}
	if err := c.admit(ctx); err != nil {
		return nil, err
	}
	for range 3 {
		h, err := s.callersHold(ctx, c, hid, req.ReservationIDs)
		if err != nil {
			return nil, err
		}
		if done, err := s.extendOnce(ctx, h, req.ReservationIDs); done || err != nil {
			return h, err
		}
	}
	return nil, Errorf(CodeConflict, "the hold changed concurrently; retry")
}

// callersHold reads hold hid when it is the caller's and has every listed
// reservation (404 with the reservation's param otherwise).
func (s *Holds) callersHold(ctx context.Context, c Caller, hid string, rids []string) (*Hold, error) {
	h, err := s.HoldStore.GetHold(ctx, hid)
	if isNotFound(err) || (err == nil && (!h.owned(c) || !h.boundTo(c))) {
		return nil, &Error{Code: CodeNotFound, Param: "reservation_ids[0]", Message: "no hold of this key has reservation " + rids[0]}
	}
	if err != nil {
		return nil, err
	}
	for i, rid := range rids {
		if _, ok := h.Seat(rid); !ok {
			return nil, &Error{Code: CodeNotFound, Param: fmt.Sprintf("reservation_ids[%d]", i), Message: "no hold of this key has reservation " + rid}
		}
	}
	return h, nil
}

// listedSeats are the seats of h the reservations name, each once.
func listedSeats(h *Hold, rids []string) []HoldSeat {
	seats := make([]HoldSeat, 0, len(rids))
	for _, rid := range rids {
		if seat, ok := h.Seat(rid); ok && !slices.ContainsFunc(seats, func(x HoldSeat) bool { return x.ReservationID == rid }) {
			seats = append(seats, seat)
		}
	}
	return seats
}

// extendOnce tries the extension from h as read; false (and no error) when
// the hold moved meanwhile and should be read again. On success h is the
// extended hold with the listed seats.
func (s *Holds) extendOnce(ctx context.Context, h *Hold, listed []string) (bool, error) {
	now := s.now()
	if !now.Before(h.ExpiresAt) {
		return true, holdExpired(h.ID)
	}
	maxAt := h.CreatedAt.Add(s.Settings.HoldMaxLifetime)
	if !h.ExpiresAt.Before(maxAt) {
		return true, Errorf(CodeConflict, "hold %s has reached its maximum lifetime of %s; order its seats now, or release them and hold them again", h.ID, s.Settings.HoldMaxLifetime)
	}
	until := h.ExpiresAt.Add(s.Settings.HoldExtendStep)
	if until.After(maxAt) {
		until = maxAt
	}
	seats := listedSeats(h, listed)
	err := s.HoldStore.ExtendHold(ctx, h, seats, until, now)
	var se *StockError
	switch {
	case err == nil:
		h.ExpiresAt, h.Seats = until, seats
		return true, nil
	case errors.As(err, &se):
		return true, holdExpired(h.ID) // that reservation no longer holds its seat
	case errors.Is(err, ErrStateChanged):
		return false, nil
	}
	return true, err
}

func holdExpired(id string) error {
	return &Error{Code: CodeHoldExpired, Message: fmt.Sprintf("hold %s has expired (or its seats were released or ordered); hold the seats again", id)}
}

// validateExtend checks the request and returns the one hold its
// reservations belong to.
func validateExtend(req ExtendRequest) (string, error) {
	ids := req.ReservationIDs
	if len(ids) == 0 {
		return "", Invalid("reservation_ids", "reservation_ids must list at least one reservation of the hold to extend")
	}
	if len(ids) > MaxSeatsPerHold {
		return "", Invalid("reservation_ids", "a hold has at most %d reservations", MaxSeatsPerHold)
	}
	var hold string
	for i, rid := range ids {
		p := fmt.Sprintf("reservation_ids[%d]", i)
		hid, ok := HoldIDOfReservation(rid)
		if !ok {
			return "", Invalid(p, "%q is not a reservation id (rsv_...)", rid)
		}
		if hold != "" && hid != hold {
			return "", Invalid(p, "all reservations must be of one hold; extend each hold with its own request")
		}
		hold = hid
	}
	return hold, nil
}
