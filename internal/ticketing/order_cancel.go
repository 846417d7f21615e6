package ticketing

import (
	"context"
	"errors"
)

// CancelRequested is the cancel reason of an order its caller cancelled
// (POST /orders/{id}/cancel).
const CancelRequested = "requested"

// CancelOrder is POST /orders/{id}/cancel: a pending order is cancelled now,
// in the same transaction as every other cancellation (conditional on the
// order's version and pending status): its stock and promo use are given
// back, a publishable key's per-client pending order is freed and
// order.cancelled is sent. Any other status is a conflict. A payment racing
// it either wins (the order is paid and the cancel is a conflict) or loses
// (the order is cancelled, and a payment confirmed for it later takes the
// late-payment path: reinstated, or the money goes back). A publishable key
// must show the order's poll token (a storefront has it; the key alone is
// public).
func (s *Orders) CancelOrder(ctx context.Context, c Caller, id, pollToken string) (*Order, error) {
	if c.Publishable && !s.CheckPollToken(id, pollToken) {
		return nil, &Error{Code: CodeUnauthorized, Message: "a publishable key cancels an order only with its poll token: send it in the Tix-Poll-Token header"}
	}
	for range 3 {
		o, err := s.load(ctx, c.Tenant, id)
		if err != nil {
			return nil, err
		}
		if o.Status != OrderPending {
			return nil, Errorf(CodeConflict, "order %s is %s; only a pending order can be cancelled", o.ID, o.Status)
		}
		err = s.cancel(ctx, o, CancelRequested, false)
		if errors.Is(err, ErrStateChanged) {
			continue // paid, expired or cancelled meanwhile: answer from the new state
		}
		if err != nil {
			return nil, err
		}
		return s.reload(ctx, id)
	}
	return nil, Errorf(CodeConflict, "order %s changed concurrently; read it and retry", id)
}
