package ticketing

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// The lease on an order's Idempotency-Key is short (LeaseTTL, 5 s) so that a
// retry recovers a create whose invocation crashed within seconds, and it is
// renewed while the invocation works, so that a live create waiting on the
// bank (up to the bank's timeout, 10 s) is never taken over while it runs:
// two invocations calling the bank for one order could start two payments.
// Renewals run every LeaseTTL/leaseRenewals; an invocation that can no longer
// vouch for its lease (another took it over, or no renewal got through for
// LeaseTTL minus leaseMargin) stops waiting on the bank before a retry may
// take over.
const leaseRenewals = 3

// leaseMargin: an invocation whose renewals fail stops waiting on the bank
// LeaseTTL/leaseMargin (1 s) before its lease ends, so before a retry may
// take over even on a clock a little ahead.
const leaseMargin = 5

var (
	// errLeaseTaken cancels an invocation's work once another holds its lease.
	errLeaseTaken = errors.New("the idempotency lease was taken over")
	// errLeaseUnvouched cancels it when no renewal got through in time.
	errLeaseUnvouched = errors.New("the idempotency lease could not be renewed in time")
)

// keepLease renews rec's lease at once (ErrLeaseLost: another invocation holds
// it now, and this one must not call the bank) and then every
// LeaseTTL/leaseRenewals until stop is called. The returned context is
// cancelled, with errLeaseTaken or errLeaseUnvouched as its cause, when the
// lease can no longer be vouched for.
func (s *Orders) keepLease(ctx context.Context, rec *Idempotency) (context.Context, func(), error) {
	ttl := s.Settings.LeaseTTL
	vouch := ttl - ttl/leaseMargin
	renew := func(ctx context.Context) (time.Time, error) {
		sent := time.Now() // real time: the watchdog below runs on it
		mine := *rec
		mine.LeaseUntil = s.now().Add(ttl)
		ctx, cancel := context.WithTimeout(ctx, vouch)
		defer cancel()
		return sent, s.Idempotency.ClaimIdempotency(ctx, &mine, rec.Lease)
	}
	sent, err := renew(ctx)
	if err != nil {
		return nil, nil, err
	}
	work, cancel := context.WithCancelCause(ctx)
	watchdog := time.AfterFunc(time.Until(sent.Add(vouch)), func() { cancel(errLeaseUnvouched) })
	renewals, stopRenewals := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(ttl / leaseRenewals)
		defer tick.Stop()
		for {
			select {
			case <-renewals.Done():
				return
			case <-tick.C:
			}
			at, err := renew(renewals)
			switch {
			case err == nil:
				watchdog.Reset(time.Until(at.Add(vouch)))
			case errors.Is(err, ErrLeaseLost):
				cancel(errLeaseTaken)
				return
			case renewals.Err() == nil:
				slog.WarnContext(ctx, "renew idempotency lease", "key", rec.Key, "order_id", rec.ResourceID, "error", err)
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stopRenewals()
			<-done
			watchdog.Stop()
			cancel(nil)
		})
	}
	return work, stop, nil
}

// leaseTakenError answers an invocation that found its lease held by another
// one, which is completing the order.
func leaseTakenError(orderID string) error {
	return &Error{Code: CodeOrderPending, RetryAfter: time.Second,
		Message: "order " + orderID + " is still being prepared by another request with this Idempotency-Key; retry in about a second"}
}
