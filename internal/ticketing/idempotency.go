package ticketing

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Idempotency binds an Idempotency-Key (per organizer, environment and scope) to
// the resource it created. Lease is held by the invocation working on it until
// LeaseUntil; a crashed invocation's lease runs out and a retry takes it over.
type Idempotency struct {
	Tenant
	Scope       string    // "order" | "hold", per publishable key and client network for pk callers
	Key         string    // the client's Idempotency-Key
	RequestHash string    // sha256 of the canonical request
	ResourceID  string    // order or hold id
	Lease       string    // random token of the current holder
	LeaseUntil  time.Time // for holds: the hold's expiry
	CreatedAt   time.Time
}

// Idempotency scopes.
const (
	IdemOrder = "order"
	IdemHold  = "hold"
)

// idemScope namespaces the caller's Idempotency-Keys. A secret key's share the
// organizer's namespace (its servers retry from anywhere). A publishable key is
// held by every visitor of the storefront, so its keys are scoped to the key and
// the client's network: a visitor can neither claim nor replay a key another
// visitor or the organizer's servers used. A visitor whose network changes
// between two retries gets a second pending order rather than a replay; it is
// never paid twice, since each order has its own payment, and the unpaid one expires.
func (c Caller) idemScope(base string) string {
	if !c.Publishable {
		return base
	}
	return base + "#pk#" + c.KeyID + "#" + c.IP
}

// requestHash fingerprints a decoded request, so that the same request sent with
// other whitespace or key order is the same, and any other request is not.
func requestHash(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// replay answers with an order that exists: its poll token and, once it has
// its payment, the payment's QR (created: whether this call made it).
func (s *Orders) replay(ctx context.Context, o *Order, created bool) (*OrderResult, error) {
	r := &OrderResult{Order: o, Created: created, PollToken: s.PollToken(o.ID)}
	if o.Payment != nil {
		prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
		if err != nil {
			return nil, &Error{Code: CodePaymentProviderError, Message: "the SBP provider is not available", Err: err}
		}
		if r.QRImage, err = prov.QRImage(o.Payment.Payload); err != nil {
			return nil, fmt.Errorf("render QR of order %s: %w", o.ID, err)
		}
	}
	return r, nil
}

// resumeOrder answers a repeated POST /orders (contract section 3's table).
func (s *Orders) resumeOrder(ctx context.Context, c Caller, rec *Idempotency, req *OrderRequest, buyer Buyer, hash string, now time.Time) (*OrderResult, error) {
	if rec.RequestHash != hash {
		return nil, Errorf(CodeConflict, "this Idempotency-Key was used with a different request body; use a fresh key for a different order")
	}
	o, err := s.OrderStore.GetOrder(ctx, rec.ResourceID)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	leaseLive := now.Before(rec.LeaseUntil)
	claim := func() (*Idempotency, error) {
		mine := *rec
		mine.Lease, mine.LeaseUntil = randomString(idAlphabet, 16), now.Add(s.Settings.LeaseTTL)
		if err := s.Idempotency.ClaimIdempotency(ctx, &mine, rec.Lease); err != nil {
			if errors.Is(err, ErrLeaseLost) {
				return nil, Errorf(CodeConflict, "an identical request with this Idempotency-Key is in flight; retry shortly")
			}
			return nil, err
		}
		return &mine, nil
	}
	if isNotFound(err) { // the order was never written
		if leaseLive {
			return nil, Errorf(CodeConflict, "an identical request with this Idempotency-Key is in flight; retry shortly")
		}
		mine, err := claim() // the earlier invocation died before writing its order
		if err != nil {
			return nil, err
		}
		return s.newOrder(ctx, c, &orderAttempt{rec: mine, req: req, buyer: buyer, hash: hash, now: now})
	}
	o, err = s.current(ctx, o)
	if err != nil {
		return nil, err
	}
	switch o.Status {
	case OrderCancelled:
		return nil, Errorf(CodeOrderCancelled, "the order for this Idempotency-Key (%s) was cancelled; use a fresh key to order again", o.ID)
	case OrderPending:
		if o.Payment != nil {
			return s.replay(ctx, o, false)
		}
		if leaseLive {
			return nil, &Error{Code: CodeOrderPending, RetryAfter: time.Second,
				Message: fmt.Sprintf("order %s is still being prepared; retry in about a second", o.ID)}
		}
		mine, err := claim() // the earlier invocation died (or the provider failed) before the QR
		if err != nil {
			return nil, err
		}
		prov, err := s.Payments(ctx, o.OrganizerID, o.Environment)
		if err != nil {
			return nil, &Error{Code: CodePaymentProviderError, Message: "the SBP provider is not available; retry later with the same Idempotency-Key", Err: err}
		}
		return s.attachPayment(ctx, mine, o, prov)
	default:
		return s.replay(ctx, o, false)
	}
}
