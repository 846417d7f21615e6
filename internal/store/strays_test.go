package store_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// A stray payment is recorded once however many notifications and checks
// race to record it (a conditional put): exactly one writer creates it, with
// its check's marker; a save at a stale version is refused; settling it
// deletes the marker, and the operator's list shows it.
func TestStrays_RecordedOnceUnderRaceAndSettled(t *testing.T) {
	st := testenv.Store(t, nil)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	at := now.Add(-time.Second) // due at once: the sweep's query finds its marker
	p := ticketing.StrayPayment{PaymentID: "7000000009", OrderID: "ord_stray1", OrganizerID: "org_1", Environment: ticketing.EnvLive,
		Amount: 777, Status: ticketing.StrayRefundPending, DetectedAt: now, CheckAt: &at}
	var created atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := p
			ok, err := st.Payments.PutStray(ctx, &c)
			if err != nil {
				t.Error(err)
			}
			if ok {
				created.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := created.Load(); n != 1 {
		t.Fatalf("%d of 8 concurrent PutStray created the record, want exactly 1", n)
	}
	got, err := st.Payments.OrderStrays(ctx, "ord_stray1")
	if err != nil || len(got) != 1 || got[0].Amount != 777 || got[0].Version != 1 {
		t.Fatalf("OrderStrays = %+v, %v; want one of 777 at version 1", got, err)
	}
	timers, err := st.Due.DueTimers(ctx, now, 100)
	if err != nil || !hasTimer(timers, ticketing.TimerStrayCheck, "ord_stray1") {
		t.Fatalf("due timers %+v, %v: want the stray check", timers, err)
	}
	stale := got[0]
	stale.Version = 0
	if err := st.Payments.SaveStray(ctx, &stale, nil, nil); !errors.Is(err, ticketing.ErrStateChanged) {
		t.Errorf("save at a stale version: %v, want ErrStateChanged", err)
	}
	done := got[0]
	old, _ := done.CheckTimer()
	done.Status, done.RefundedAt, done.CheckAt = ticketing.StrayRefunded, &now, nil
	if err := st.Payments.SaveStray(ctx, &done, nil, []ticketing.Timer{old}); err != nil {
		t.Fatal(err)
	}
	if timers, _ := st.Due.DueTimers(ctx, now, 100); hasTimer(timers, ticketing.TimerStrayCheck, "ord_stray1") {
		t.Errorf("the settled stray's check is still due: %+v", timers)
	}
	all, err := st.Payments.ListStrays(ctx)
	if err != nil || len(all) != 1 || all[0].Status != ticketing.StrayRefunded || all[0].PaymentID != "7000000009" {
		t.Errorf("ListStrays = %+v, %v; want the one, refunded", all, err)
	}
}

func hasTimer(ts []ticketing.Timer, kind, orderID string) bool {
	for _, t := range ts {
		if t.Kind == kind && t.OrderID == orderID {
			return true
		}
	}
	return false
}
