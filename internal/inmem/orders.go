package inmem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"tix/internal/ticketing"
)

// storedOrder is an order as written: its document, plus the status, expiry and
// version every condition reads.
type storedOrder struct {
	doc       []byte
	status    ticketing.OrderStatus
	expiresAt time.Time
	version   int64
	org, env  string
	eventID   string
	createdAt time.Time
	buyer     string // ticketing.BuyerKey, "" without a buyer email
}

func occKey(o *ticketing.Order) string {
	if o.OccurrenceID == "" {
		return ticketing.NoOccurrence
	}
	return o.OccurrenceID
}

func lineSeat(o *ticketing.Order, l ticketing.OrderLine) seatKey {
	return seatKey{o.EventID, string(o.Environment), occKey(o), l.Seat.SeatID}
}

func lineTier(o *ticketing.Order, l ticketing.OrderLine) tierKey {
	return tierKey{o.EventID, string(o.Environment), occKey(o), l.TierID}
}

func promoKey(o *ticketing.Order, code string) tierKey {
	return tierKey{o.EventID, string(o.Environment), "", code}
}

// put writes o's document with version v (its expiry is kept from creation).
func (s *state) put(o *ticketing.Order, v int64) error {
	doc, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode order %s: %w", o.ID, err)
	}
	exp := o.ExpiresAt
	if old, ok := s.orders[o.ID]; ok {
		exp = old.expiresAt
	}
	s.orders[o.ID] = storedOrder{doc: doc, status: o.Status, expiresAt: exp, version: v,
		org: o.OrganizerID, env: string(o.Environment), eventID: o.EventID, createdAt: o.CreatedAt}
	if ticketing.NormalizeBuyerEmail(o.Buyer.Email) != "" {
		st := s.orders[o.ID]
		st.buyer = ticketing.BuyerKey(o.OrganizerID, o.Environment, o.Buyer.Email)
		s.orders[o.ID] = st
	}
	return nil
}

// fromState checks the condition of every change: the version read and the
// stored status, plus an extra check of the stored order.
func (s *state) fromState(o *ticketing.Order, status ticketing.OrderStatus, also func(storedOrder) bool) bool {
	cur, ok := s.orders[o.ID]
	return ok && cur.version == o.Version && cur.status == status && (also == nil || also(cur))
}

// CreateOrder writes a pending order and takes its stock at once, or nothing.
// Failures are reported in the order the transaction lists its items: the
// order, its lines, the promo code, the client's cap.
func (s *Orders) CreateOrder(ctx context.Context, o *ticketing.Order, ev *ticketing.Event, now time.Time) error {
	return s.CreateOrderWithKey(ctx, o, ev, nil, now)
}

// CreateOrderWithKey is CreateOrder that also binds the order's
// Idempotency-Key record (when idem is not nil) at once, if the key has none.
func (s *Orders) CreateOrderWithKey(_ context.Context, o *ticketing.Order, ev *ticketing.Event, idem *ticketing.Idempotency, now time.Time) error {
	o.Version = 1
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.createFits(o, ev, idem, now); err != nil {
		return err
	}
	if err := s.put(o, 1); err != nil {
		return err
	}
	if idem != nil {
		s.idem[idemKey(idem.Tenant, idem.Scope, idem.Key)] = *idem
	}
	for _, l := range o.Lines {
		if l.Seated {
			k := lineSeat(o, l)
			r := s.seats[k]
			r.tier, r.state, r.until, r.order = l.TierID, ticketing.SeatReserved, o.ExpiresAt, o.ID
			s.seats[k] = r
			continue
		}
		s.moveLine(o, l, 1)
	}
	if o.Promo != nil && o.Promo.Limited {
		p, _ := ev.Promo(o.Promo.Code)
		s.promoUses[promoKey(o, p.Code)]++
	}
	if o.ClientCap != nil {
		s.capTake(o)
	}
	t := o.ExpiryTimer()
	s.due[dueKey(t)] = t
	return nil
}

// createFits checks every condition of CreateOrder without writing.
func (s *state) createFits(o *ticketing.Order, ev *ticketing.Event, idem *ticketing.Idempotency, now time.Time) error {
	if _, ok := s.orders[o.ID]; ok {
		return ticketing.ErrOrderExists
	}
	if idem != nil {
		if old, ok := s.idem[idemKey(idem.Tenant, idem.Scope, idem.Key)]; ok {
			return &ticketing.IdempotencyTakenError{Existing: &old}
		}
	}
	for i, l := range o.Lines {
		if l.Seated && !s.seatTakeable(o, l, now) {
			return &ticketing.StockError{Index: i, Seat: true, KeyFree: idem != nil}
		}
	}
	if err := s.planLines(o, ev); err != nil {
		var se *ticketing.StockError
		if errors.As(err, &se) {
			se.KeyFree = idem != nil
		}
		return err
	}
	if o.Promo != nil && o.Promo.Limited {
		p, ok := ev.Promo(o.Promo.Code)
		if !ok || s.promoUses[promoKey(o, p.Code)] >= p.MaxUses {
			return ticketing.ErrPromoExhausted
		}
	}
	if o.ClientCap != nil && !s.capFits(o) {
		return ticketing.ErrClientCap
	}
	return nil
}

// seatTakeable: a seat line with a reservation takes the seat only from the
// live hold of that reservation; one without, only a free seat.
func (s *state) seatTakeable(o *ticketing.Order, l ticketing.OrderLine, now time.Time) bool {
	k := lineSeat(o, l)
	if l.ReservationID == "" {
		return s.seatFree(k, now)
	}
	r, ok := s.seats[k]
	return ok && r.resv == l.ReservationID && r.state == ticketing.SeatHeld && r.until.After(now)
}

// seatsIn reports whether every seat of o is the order's, in state.
func (s *state) seatsIn(o *ticketing.Order, state string) bool {
	for _, l := range o.Lines {
		if !l.Seated {
			continue
		}
		if r, ok := s.seats[lineSeat(o, l)]; !ok || r.order != o.ID || r.state != state {
			return false
		}
	}
	return true
}

// SetPayment stores the payment on a pending order (conditional on its version).
func (s *Orders) SetPayment(_ context.Context, o *ticketing.Order) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fromState(o, ticketing.OrderPending, nil) {
		return ticketing.ErrStateChanged
	}
	if err := s.put(o, o.Version+1); err != nil {
		return err
	}
	o.Version++
	return nil
}

// GetOrder reads an order.
func (s *Orders) GetOrder(_ context.Context, id string) (*ticketing.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.orders[id]
	if !ok {
		return nil, ticketing.NotFound("order")
	}
	return decodeOrder(st)
}

func decodeOrder(st storedOrder) (*ticketing.Order, error) {
	var o ticketing.Order
	if err := json.Unmarshal(st.doc, &o); err != nil {
		return nil, fmt.Errorf("decode order: %w", err)
	}
	o.Version = st.version
	return &o, nil
}

// ConfirmOrder: pending and not overdue (unless overdueOK) -> paid, seats
// sold, ticket numbers taken in the environment, outbox event, at once.
func (s *Orders) ConfirmOrder(_ context.Context, o *ticketing.Order, ev *ticketing.OrderEvent, now time.Time, overdueOK bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fromState(o, ticketing.OrderPending, func(c storedOrder) bool { return overdueOK || c.expiresAt.After(now) }) {
		return ticketing.ErrStateChanged
	}
	if !s.seatsIn(o, ticketing.SeatReserved) {
		return ticketing.ErrStateChanged
	}
	numbers := []string{o.TicketNumber}
	for _, t := range o.Tickets {
		numbers = append(numbers, t.Number)
	}
	for _, n := range numbers {
		if _, taken := s.tickets[string(o.Environment)+"#"+n]; taken {
			return ticketing.ErrTicketNumberTaken
		}
	}
	if err := s.put(o, o.Version+1); err != nil {
		return err
	}
	for _, l := range o.Lines {
		if l.Seated {
			k := lineSeat(o, l)
			r := s.seats[k]
			r.state, r.until = ticketing.SeatSold, time.Time{}
			s.seats[k] = r
		}
	}
	for _, n := range numbers {
		s.tickets[string(o.Environment)+"#"+n] = o.ID
	}
	s.outbox[ev.ID] = *ev
	delete(s.due, dueKey(o.ExpiryTimer()))
	s.capGiveBack(o)
	o.Version++
	return nil
}

// CancelOrder: pending (overdueOnly: and past its expiry) -> cancelled, stock
// and promo use given back, outbox event, at once.
func (s *Orders) CancelOrder(_ context.Context, o *ticketing.Order, ev *ticketing.OrderEvent, now time.Time, overdueOnly bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	overdue := func(c storedOrder) bool { return !overdueOnly || !c.expiresAt.After(now) }
	if !s.fromState(o, ticketing.OrderPending, overdue) {
		return ticketing.ErrStateChanged
	}
	if err := s.put(o, o.Version+1); err != nil {
		return err
	}
	for _, l := range o.Lines {
		if !l.Seated {
			s.moveLine(o, l, -1)
		} else if r, ok := s.seats[lineSeat(o, l)]; ok && r.order == o.ID && r.state == ticketing.SeatReserved {
			delete(s.seats, lineSeat(o, l))
		}
	}
	if o.Promo != nil && o.Promo.Limited {
		s.promoUses[promoKey(o, o.Promo.Code)]--
	}
	s.outbox[ev.ID] = *ev
	delete(s.due, dueKey(o.ExpiryTimer()))
	if t, ok := o.CheckTimer(); ok {
		s.due[dueKey(t)] = t
	}
	s.capGiveBack(o)
	o.Version++
	return nil
}

// StartRefund records a pending refund on a paid order, with its settlement
// timer's marker.
func (s *Orders) StartRefund(_ context.Context, o *ticketing.Order) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fromState(o, ticketing.OrderPaid, nil) {
		return ticketing.ErrStateChanged
	}
	if err := s.put(o, o.Version+1); err != nil {
		return err
	}
	if t, ok := o.SettleTimer(); ok {
		s.due[dueKey(t)] = t
	}
	o.Version++
	return nil
}

// CompleteRefund: paid -> refunded, sold seats and counters given back, outbox
// event, the settlement marker deleted, at once.
func (s *Orders) CompleteRefund(_ context.Context, o *ticketing.Order, ev *ticketing.OrderEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fromState(o, ticketing.OrderPaid, nil) {
		return ticketing.ErrStateChanged
	}
	if !s.seatsIn(o, ticketing.SeatSold) {
		return ticketing.ErrStateChanged
	}
	if err := s.put(o, o.Version+1); err != nil {
		return err
	}
	for _, l := range o.Lines {
		if l.Seated {
			delete(s.seats, lineSeat(o, l))
		} else {
			s.moveLine(o, l, -1)
		}
	}
	s.outbox[ev.ID] = *ev
	if t, ok := o.SettleTimer(); ok {
		delete(s.due, dueKey(t))
	}
	o.Version++
	return nil
}
