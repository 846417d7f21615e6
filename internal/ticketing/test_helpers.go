package ticketing

import (
	"context"
	"errors"
)

// The test helpers (POST /test-helpers/..., docs/guide.md) make a test
// order's or hold's future happen now, through the paths the real events
// take, so an integrator's tests need not wait. They work only in the test
// environment (sk_test keys): anything else is 422 unsupported.

// TestHelpers are the test helpers over the sales services.
type TestHelpers struct {
	orders *Orders
	holds  *Holds
}

func testOnly(t Tenant, what string) error {
	if t.Environment != EnvTest {
		return &Error{Code: CodeUnsupported, Message: what + " works only for test orders and holds with an sk_test key"}
	}
	return nil
}

// ExpireOrder is POST /test-helpers/orders/{id}/expire: a pending test order
// expires now, as its expiry timer would expire it (cancelled, reason
// expired, stock back, order.cancelled). Any other status is 409.
func (th *TestHelpers) ExpireOrder(ctx context.Context, t Tenant, id string) (*Order, error) {
	if err := testOnly(t, "the expire test helper"); err != nil {
		return nil, err
	}
	for range 3 {
		o, err := th.orders.load(ctx, t, id)
		if err != nil {
			return nil, err
		}
		if o.Status != OrderPending {
			return nil, Errorf(CodeConflict, "order %s is %s; only a pending order can expire", o.ID, o.Status)
		}
		err = th.orders.cancel(ctx, o, "expired", false)
		if errors.Is(err, ErrStateChanged) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return th.orders.reload(ctx, id)
	}
	return nil, Errorf(CodeConflict, "order %s changed concurrently; retry", id)
}

// LatePayment is POST /test-helpers/orders/{id}/late-payment: the buyer's
// money arrives after the order ended. A pending order expires first; a
// cancelled one then takes the late-payment path (reinstated while its stock
// can be taken, else the money goes back). Paid and refunded orders are 409.
func (th *TestHelpers) LatePayment(ctx context.Context, t Tenant, id string) (*Order, error) {
	if err := testOnly(t, "the late-payment test helper"); err != nil {
		return nil, err
	}
	o, err := th.orders.load(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if o.Status == OrderPending {
		if _, err := th.ExpireOrder(ctx, t, id); err != nil {
			return nil, err
		}
	}
	return th.orders.payments.simulateLate(ctx, t, id)
}

// RefundOutcome is POST /test-helpers/orders/{id}/refund-outcome: the test
// acquirer settles the order's pending refund now (outcome settle), as when
// its settlement time comes. A failed refund is not a state tix has: the
// acquirer settles every refund it accepted, so fail is 422 unsupported.
func (th *TestHelpers) RefundOutcome(ctx context.Context, t Tenant, id, outcome string) (*Order, error) {
	if err := testOnly(t, "the refund-outcome test helper"); err != nil {
		return nil, err
	}
	switch outcome {
	case "settle":
	case "fail":
		return nil, Errorf(CodeUnsupported, "a refund the acquirer accepted always settles in tix; only outcome settle can be simulated")
	default:
		return nil, Invalid("outcome", "outcome must be settle or fail")
	}
	o, err := th.orders.load(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if o.Status != OrderPaid || o.Refund == nil || o.Refund.Status != RefundPending {
		return nil, Errorf(CodeConflict, "order %s has no pending refund (it is %s); refund it first", o.ID, o.Status)
	}
	if err := th.orders.completeRefund(ctx, o); err != nil && !errors.Is(err, ErrStateChanged) {
		return nil, err
	}
	return th.orders.load(ctx, t, id)
}

// ExpireHold is POST /test-helpers/seat-holds/expire (test environment
// only): the listed reservations of one hold expire now, as if their time
// had come: their seats are free, the reservations cannot be ordered or
// extended (410), and the client's count gives them back as for any expired
// hold. List every reservation of a hold to expire it whole.
func (th *TestHelpers) ExpireHold(ctx context.Context, c Caller, req ExtendRequest) (*Hold, error) {
	if err := testOnly(c.Tenant, "the seat-hold expire test helper"); err != nil {
		return nil, err
	}
	hid, err := validateExtend(req)
	if err != nil {
		return nil, err
	}
	h, err := th.holds.callersHold(ctx, c, hid, req.ReservationIDs)
	if err != nil {
		return nil, err
	}
	now := th.holds.now()
	seats := listedSeats(h, req.ReservationIDs)
	err = th.holds.HoldStore.ExtendHold(ctx, h, seats, now, now)
	var se *StockError
	if errors.As(err, &se) || errors.Is(err, ErrStateChanged) {
		return nil, holdExpired(h.ID)
	}
	if err != nil {
		return nil, err
	}
	h.ExpiresAt, h.Seats = now, seats
	return h, nil
}
