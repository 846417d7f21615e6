package ticketing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// OrderResult is the answer to POST /orders.
type OrderResult struct {
	Order     *Order
	Created   bool   // 201: this call created the order or stored its QR; else a 200 replay
	QRImage   string // PNG data URI of the payment QR
	PollToken string
}

// CreateOrder creates a pending ticket order paid by SBP, following the
// idempotency table of contract section 3: the key is bound to its order for
// the order's life. The key's record is written in the order's transaction
// (nothing is written for a request refused before it); while an invocation
// still works on the order (a live payment being created), the record's lease
// says so, and a crashed invocation does not block the key for longer than
// LeaseTTL.
func (s *Orders) CreateOrder(ctx context.Context, c Caller, idemKey string, req OrderRequest) (*OrderResult, error) {
	buyer, err := validateCreate(&req)
	if err != nil {
		return nil, err
	}
	if err := c.admit(ctx); err != nil {
		return nil, err
	}
	if req.PromoCode != nil {
		if err := s.pricing.admitPromoTry(ctx, c); err != nil {
			return nil, err
		}
	}
	now := s.now()
	hash := requestHash(req)
	rec := &Idempotency{
		Tenant: c.Tenant, Scope: c.idemScope(IdemOrder), Key: idemKey, RequestHash: hash,
		ResourceID: newID("ord_", 20), Lease: randomString(idAlphabet, 16),
		LeaseUntil: now.Add(s.Settings.LeaseTTL), CreatedAt: now,
	}
	return s.newOrder(ctx, c, &orderAttempt{rec: rec, req: &req, buyer: buyer, hash: hash, now: now, fresh: true})
}

// orderAttempt is one invocation's work on an order creation. fresh: rec is
// not stored yet and is written in the order's transaction; otherwise it is
// the stored record whose lease this invocation holds.
type orderAttempt struct {
	rec   *Idempotency
	req   *OrderRequest
	buyer Buyer
	hash  string
	now   time.Time
	fresh bool
}

// fail ends an attempt that wrote no order. A fresh key may have been bound
// by another request meanwhile: that one answers (a replay, or a conflict for
// another body). A claimed key is freed for a corrected retry.
func (s *Orders) failOrder(ctx context.Context, c Caller, a *orderAttempt, err error) (*OrderResult, error) {
	if a.fresh {
		return s.keyBound(ctx, c, a, nil, err)
	}
	if rerr := s.Idempotency.ReleaseIdempotency(context.WithoutCancel(ctx), a.rec); rerr != nil {
		slog.WarnContext(ctx, "release idempotency key", "error", rerr)
	}
	return nil, err
}

// keyBound answers a request whose key is bound to an order already, as a
// repeated request (resumeOrder); existing nil: it is read. When the key has
// no record after all, orErr is the answer.
func (s *Orders) keyBound(ctx context.Context, c Caller, a *orderAttempt, existing *Idempotency, orErr error) (*OrderResult, error) {
	if existing == nil {
		got, err := s.Idempotency.GetIdempotency(ctx, a.rec.Tenant, a.rec.Scope, a.rec.Key)
		if isNotFound(err) {
			return nil, orErr
		}
		if err != nil {
			return nil, err
		}
		existing = got
	}
	return s.resumeOrder(ctx, c, existing, a.req, a.buyer, a.hash, a.now)
}

func (s *Orders) newOrder(ctx context.Context, c Caller, a *orderAttempt) (*OrderResult, error) {
	p, err := s.pricing.price(ctx, c, a.req, a.now)
	if err == nil {
		err = checkSellable(p, a.now)
	}
	if err == nil {
		err = checkReservationsLive(p, a.now)
	}
	if err != nil {
		return s.failOrder(ctx, c, a, err)
	}
	prov, err := s.Payments(ctx, c.OrganizerID, c.Environment)
	if err != nil {
		return s.failOrder(ctx, c, a, &Error{Code: CodePaymentProviderError, Message: "the SBP provider is not available for this environment; retry later with the same Idempotency-Key", Err: err})
	}
	o := s.orderOf(c, a, p)
	if o.ClientCap != nil && o.Quantity > o.ClientCap.MaxUnits {
		return s.failOrder(ctx, c, a, s.clientCapError(o.ClientCap))
	}
	if _, offline := prov.(OfflinePayments); offline {
		// The payment follows from the order alone: it is stored with the
		// order. Should it fail, the order is written without it and
		// attachPayment asks again, as for a live provider.
		if pay, err := prov.CreatePayment(ctx, paymentRequest(o)); err == nil {
			o.Payment = &pay
		}
	}
	if err := s.writeOrder(ctx, c, a, o, p.Event); err != nil {
		return s.orderRefused(ctx, c, a, o, err)
	}
	for _, h := range p.holds {
		if h.IPKey == "" {
			continue
		}
		// The hold is used up: it no longer counts against its IP's cap.
		if err := s.Limits.ForgetHoldIP(ctx, h.IPKey, h.ID); err != nil {
			slog.WarnContext(ctx, "forget hold for its IP cap", "hold_id", h.ID, "error", err)
		}
	}
	s.schedule(ctx, TimerOrderExpiry, o.ID, o.ExpiresAt)
	if o.Payment != nil {
		return s.replay(ctx, o, true)
	}
	return s.attachPayment(ctx, a.rec, o, prov)
}

// orderOf is the pending order of a priced request.
func (s *Orders) orderOf(c Caller, a *orderAttempt, p *Priced) *Order {
	o := &Order{
		ID: a.rec.ResourceID, OrganizerID: c.OrganizerID, Environment: c.Environment, Type: OrderTypeTicket,
		Status: OrderPending, EventID: p.Event.ID, EventTitle: p.Event.Title, OccurrenceID: occOrEmpty(p.OccurrenceID),
		Lines: p.Lines, Quantity: p.Quantity, Currency: CurrencyOf(p.Event), BasePrice: p.BasePrice,
		Discount: p.Discount, TotalPrice: p.Total, Promo: p.Promo, Buyer: a.buyer, ReturnURL: a.req.ReturnURL,
		KeyID: c.KeyID, IdempotencyKey: a.rec.Key, CreatedAt: a.now, ExpiresAt: a.now.Add(s.orderTTL(c.Environment)),
	}
	if c.Publishable {
		o.ClientCap = s.clientCapOf(c, o.EventID)
		for _, l := range o.Lines {
			// A seat of the client's own hold on this event is counted
			// already: it moves to the order.
			if h := holdOf(p.holds, l.ReservationID); h != nil && h.ClientCap != nil && h.ClientCap.Key == o.ClientCap.Key {
				if o.ClientCap.Holds == nil {
					o.ClientCap.Holds = map[string]int{}
				}
				o.ClientCap.Holds[h.ID]++
			}
		}
	}
	return o
}

// clientCapOf is the per-event count of a publishable key's client.
func (s *SalesDeps) clientCapOf(c Caller, eventID string) *ClientCap {
	return &ClientCap{Key: c.OrganizerID + "#" + string(c.Environment) + "#" + c.IP + "#" + eventID,
		MaxOrders: s.Settings.OrderIPMaxPending, MaxUnits: s.Settings.OrderIPMaxUnits}
}

// writeOrder writes the order and takes its stock (with the key's record when
// fresh); a client at its cap whose overdue orders are expired here gets one
// more try.
func (s *Orders) writeOrder(ctx context.Context, c Caller, a *orderAttempt, o *Order, e *Event) error {
	write := func() error {
		if a.fresh {
			return s.OrderStore.CreateOrderWithKey(ctx, o, e, a.rec, a.now)
		}
		return s.OrderStore.CreateOrder(ctx, o, e, a.now)
	}
	err := write()
	if errors.Is(err, ErrClientCap) && s.freeClientOverdue(ctx, o.ClientCap.Key, a.now) {
		err = write() // once: the client's overdue orders and expired holds gave their places back
	}
	return err
}

// orderRefused answers a failed writeOrder.
func (s *Orders) orderRefused(ctx context.Context, c Caller, a *orderAttempt, o *Order, err error) (*OrderResult, error) {
	inFlight := Errorf(CodeConflict, "a request with this Idempotency-Key is in flight; retry shortly")
	var se *StockError
	var taken *IdempotencyTakenError
	switch {
	case errors.As(err, &taken):
		return s.keyBound(ctx, c, a, taken.Existing, inFlight)
	case errors.As(err, &se) && se.KeyFree && a.fresh:
		return nil, stockConflict(a.req, o, se) // the key had no record: nothing to answer but this
	case errors.As(err, &se):
		return s.failOrder(ctx, c, a, stockConflict(a.req, o, se))
	case errors.Is(err, ErrClientCap):
		return s.failOrder(ctx, c, a, s.clientCapError(o.ClientCap))
	case errors.Is(err, ErrPromoExhausted):
		return s.failOrder(ctx, c, a, promoRejected())
	case errors.Is(err, ErrOrderExists):
		return nil, inFlight
	case errors.Is(err, ErrContended):
		return s.failOrder(ctx, c, a, &Error{Code: CodeRateLimited, RetryAfter: time.Second, Err: err,
			Message: "too many orders are taking this tier's tickets at this moment; retry in a second with the same Idempotency-Key"})
	}
	return nil, err
}

// freeClientOverdue expires the client's counted orders that are overdue but
// whose expiry timer has not run yet, and gives back the seats of its expired
// holds (each once, whoever gets there first), so that a client at its cap
// gets its places back on time; it reports whether any was found.
func (s *Orders) freeClientOverdue(ctx context.Context, key string, now time.Time) bool {
	holds, err := s.Limits.ReleaseOverdueHolds(ctx, key, now)
	if err != nil {
		slog.WarnContext(ctx, "give back client's expired holds", "error", err)
	}
	ids, err := s.Limits.ClientCapOverdue(ctx, key, now)
	if err != nil {
		slog.WarnContext(ctx, "read client's overdue orders", "error", err)
		return holds > 0
	}
	for _, id := range ids {
		o, err := s.OrderStore.GetOrder(ctx, id)
		if isNotFound(err) {
			continue
		}
		if err == nil {
			_, err = s.current(ctx, o)
		}
		if err != nil {
			slog.WarnContext(ctx, "expire client's overdue order", "order_id", id, "error", err)
		}
	}
	return holds > 0 || len(ids) > 0
}

// clientCapError is the 429 of a publishable-key order or hold over its
// client's cap. Pending orders and holds end within their lifetime; a minute
// is a fair first wait.
func (s *SalesDeps) clientCapError(c *ClientCap) error {
	return &Error{Code: CodeRateLimited, RetryAfter: time.Minute,
		Message: fmt.Sprintf("this IP address already keeps the most a storefront may keep unpaid for this event "+
			"(at most %d pending orders, and %d tickets in pending orders and held seats together); pay or cancel them, release held seats, or wait until they expire",
			c.MaxOrders, c.MaxUnits)}
}

// CurrencyOf is the event's currency (RUB when the catalog leaves it empty).
func CurrencyOf(e *Event) string {
	if e.Currency == "" {
		return "RUB"
	}
	return e.Currency
}

func stockConflict(req *OrderRequest, o *Order, se *StockError) error {
	l := o.Lines[se.Index]
	if l.Seated {
		return &Error{Code: CodeSeatConflict, Param: "seat_reservation_ids",
			Message: fmt.Sprintf("seat_reservation_ids[%d]: reservation %s no longer holds seat %s (%s): it was released, used by another order (even one cancelled since) or its hold expired; hold the seat again",
				se.Index, l.ReservationID, l.Seat.SeatID, l.Seat.Label)}
	}
	return &Error{Code: CodeConflict, Param: tierParam(req, se.Index),
		Message: fmt.Sprintf("not enough tickets left in tier %q for %d more", l.TierName, l.Quantity)}
}

// attachPayment asks the provider for the SBP charge (idempotent per order) and
// stores it; from then on a replay returns the order. It holds rec's lease
// while it works (keepLease): only the lease's holder calls the provider.
func (s *Orders) attachPayment(ctx context.Context, rec *Idempotency, o *Order, prov PaymentProvider) (*OrderResult, error) {
	work, stop, err := s.keepLease(ctx, rec)
	if errors.Is(err, ErrLeaseLost) {
		return nil, leaseTakenError(o.ID)
	}
	if err != nil {
		return nil, err
	}
	defer stop()
	pay, err := prov.CreatePayment(work, paymentRequest(o))
	if err != nil {
		if errors.Is(context.Cause(work), errLeaseTaken) {
			return nil, leaseTakenError(o.ID)
		}
		stop()
		// Let a retry with the same key take over at once instead of waiting out the lease.
		open := *rec
		open.Lease, open.LeaseUntil = randomString(idAlphabet, 16), time.Time{}
		if cerr := s.Idempotency.ClaimIdempotency(context.WithoutCancel(ctx), &open, rec.Lease); cerr != nil {
			slog.WarnContext(ctx, "open idempotency lease after provider failure", "error", cerr)
		}
		return nil, &Error{Code: CodePaymentProviderError, Message: "the SBP provider could not create the payment; retry with the same Idempotency-Key", Err: err}
	}
	o.Payment = &pay
	if err := s.OrderStore.SetPayment(ctx, o); err != nil {
		if !errors.Is(err, ErrStateChanged) {
			return nil, err
		}
		// Someone else stored it or the order moved on: answer with what is there.
		cur, gerr := s.OrderStore.GetOrder(ctx, o.ID)
		if gerr != nil {
			return nil, errors.Join(err, gerr)
		}
		return s.replay(ctx, cur, false)
	}
	return s.replay(ctx, o, true)
}

// paymentRequest is the charge of an order.
func paymentRequest(o *Order) PaymentRequest {
	return PaymentRequest{
		OrderID: o.ID, Environment: o.Environment, Amount: o.TotalPrice, Currency: o.Currency,
		Description: o.EventTitle, ExpiresAt: o.ExpiresAt, ReturnURL: deref(o.ReturnURL),
		Email: o.Buyer.Email, Items: o.ReceiptItems(),
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
