package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// lateRace is one round's table: the conformance event (a general-admission
// tier of capacity ticketingtest.GACap, seats seat_1..seat_4).
type lateRace struct {
	st  *store.Store
	e   *ticketing.Event
	now time.Time
	ids atomic.Int64
}

func newLateRace(t *testing.T) *lateRace {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	r := &lateRace{st: testenv.Store(t, clock.NewFixed(now)), now: now}
	if err := r.st.Catalog.PutEvent(context.Background(), ticketingtest.Event(now)); err != nil {
		t.Fatal(err)
	}
	e, err := r.st.Catalog.GetEvent(context.Background(), ticketingtest.Org, ticketingtest.EventID, ticketing.EnvTest)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	return r
}

func (r *lateRace) id(prefix string) string { return fmt.Sprintf("%s%08d", prefix, r.ids.Add(1)) }

// order is a pending order of qty general-admission units, or of one seat.
func (r *lateRace) order(qty int, seat string) *ticketing.Order {
	line := ticketing.OrderLine{TierID: ticketingtest.GATier, TierName: "GA", UnitPrice: 150000, Quantity: qty}
	if seat != "" {
		line = ticketing.OrderLine{TierID: ticketingtest.SeatTier, TierName: "Seats", UnitPrice: 150000, Quantity: 1, Seated: true,
			Seat: &ticketing.SeatRef{SeatID: seat, Label: seat, ZoneName: "Stalls"}}
	}
	return &ticketing.Order{ID: r.id("ord_r"), OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest, Type: ticketing.OrderTypeTicket,
		Status: ticketing.OrderPending, EventID: ticketingtest.EventID, EventTitle: "Conformance", Lines: []ticketing.OrderLine{line},
		Quantity: qty, Currency: "RUB", BasePrice: 150000 * int64(qty), TotalPrice: 150000 * int64(qty),
		Buyer: ticketing.Buyer{Email: "b@example.com"}, KeyID: "key_r", CreatedAt: r.now, ExpiresAt: r.now.Add(15 * time.Minute)}
}

func (r *lateRace) event(typ string, o *ticketing.Order) *ticketing.OrderEvent {
	return &ticketing.OrderEvent{ID: r.id("evt_r"), Type: typ, OrganizerID: o.OrganizerID, Environment: o.Environment,
		CreatedAt: r.now, Order: o.Webhook()}
}

// cancelled creates o and cancels it at its expiry with a payment check owed,
// as a live order is; it returns the reinstatement a late payment asks for.
func (r *lateRace) cancelled(t *testing.T, o *ticketing.Order) (*ticketing.Order, ticketing.Timer) {
	t.Helper()
	ctx := context.Background()
	if err := r.st.Orders.CreateOrder(ctx, o, r.e, r.now); err != nil {
		t.Fatal(err)
	}
	at, check := o.ExpiresAt, o.ExpiresAt.Add(10*time.Minute)
	o.Status, o.CancelReason, o.CancelledAt, o.PaymentCheckAt = ticketing.OrderCancelled, "expired", &at, &check
	if err := r.st.Orders.CancelOrder(ctx, o, r.event(ticketing.EventOrderCancelled, o), at, true); err != nil {
		t.Fatal(err)
	}
	tm, _ := o.CheckTimer()
	n := *o
	paid := at.Add(time.Minute)
	n.Status, n.PaidAt, n.CancelledAt, n.CancelReason, n.PaymentCheckAt = ticketing.OrderPaid, &paid, nil, "", nil
	n.LatePayment = &ticketing.LatePayment{PaymentID: "pay_late", Outcome: ticketing.LateReinstated, DetectedAt: paid}
	n.TicketNumber = r.id("TIX-R")
	for range n.Quantity {
		n.Tickets = append(n.Tickets, ticketing.Ticket{Number: r.id("TIX-R"), Status: ticketing.TicketIssued})
	}
	return &n, tm
}

// race runs reinstate and rivals at once; it returns whether the
// reinstatement won and how many rivals did. Every loser must be refused for
// stock: any other error fails the test.
func race(t *testing.T, reinstate func() error, rivals []func() error) (reinstated bool, won int) {
	t.Helper()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var other []error
	run := func(f func() error, ok func()) {
		defer wg.Done()
		<-start
		err := f()
		mu.Lock()
		defer mu.Unlock()
		var se *ticketing.StockError
		switch {
		case err == nil:
			ok()
		case !errors.As(err, &se):
			other = append(other, err)
		}
	}
	wg.Add(1 + len(rivals))
	go run(reinstate, func() { reinstated = true })
	for _, f := range rivals {
		go run(f, func() { won++ })
	}
	close(start)
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("errors other than a stock refusal: %v", other)
	}
	return reinstated, won
}

// A payment confirmed after its order expired races new orders for the last
// unit of a tier: exactly one of them gets it, and the counter, read all along
// the race, never passes the capacity. Rounds have 1 to 6 rivals, so that the
// reinstatement wins some.
func TestConcurrency_ReinstateRacesOrdersForTheLastUnit(t *testing.T) {
	ctx := context.Background()
	const rounds = 8
	reinstatements := 0
	for round := range rounds {
		r := newLateRace(t)
		late, tm := r.cancelled(t, r.order(1, ""))
		if err := r.st.Orders.CreateOrder(ctx, r.order(ticketingtest.GACap-1, ""), r.e, r.now); err != nil {
			t.Fatal(err)
		}
		var rivals []func() error
		for range 1 + round%6 {
			o := r.order(1, "")
			rivals = append(rivals, func() error { return r.st.Orders.CreateOrder(ctx, o, r.e, r.now) })
		}
		var most atomic.Int64
		stop := make(chan struct{})
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for {
				if st, err := r.st.Catalog.GetStock(ctx, ticketingtest.EventID, ticketing.EnvTest, ""); err == nil {
					n := int64(st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: ticketingtest.GATier}])
					if n > most.Load() {
						most.Store(n)
					}
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
		reinstated, won := race(t, func() error {
			return r.st.Orders.ReinstateOrder(ctx, late, r.e, r.event(ticketing.EventOrderPaid, late), *late.PaidAt, []ticketing.Timer{tm})
		}, rivals)
		close(stop)
		<-watched
		if reinstated {
			reinstatements++
			won++
		}
		sold := lateSold(t, r)
		if won != 1 || sold != ticketingtest.GACap || most.Load() > ticketingtest.GACap {
			t.Fatalf("round %d: %d winners (reinstated %v), sold %d, at most %d during the race; want 1 winner and %d sold",
				round, won, reinstated, sold, most.Load(), ticketingtest.GACap)
		}
		wantLateOutcome(t, r, late, reinstated)
	}
	t.Logf("the reinstatement won %d of %d rounds", reinstatements, rounds)
}

// The same for the last free seat: a reinstatement and seat holds.
func TestConcurrency_ReinstateRacesHoldsForASeat(t *testing.T) {
	ctx := context.Background()
	const rounds = 4
	reinstatements := 0
	for round := range rounds {
		r := newLateRace(t)
		late, tm := r.cancelled(t, r.order(1, "seat_1"))
		at := *late.PaidAt
		var rivals []func() error
		for i := range 1 + round%4 {
			h := &ticketing.Hold{ID: fmt.Sprintf("hold_r%016d", i), OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest,
				KeyID: "key_r", EventID: ticketingtest.EventID, OccurrenceID: ticketing.NoOccurrence, CreatedAt: at, ExpiresAt: at.Add(15 * time.Minute),
				Seats: []ticketing.HoldSeat{{ReservationID: fmt.Sprintf("rsv_r%d", i), SeatID: "seat_1", Label: "A-1", TierID: ticketingtest.SeatTier, Price: 300000}}}
			rivals = append(rivals, func() error { return r.st.Holds.CreateHold(ctx, h, nil, nil, at) })
		}
		reinstated, won := race(t, func() error {
			return r.st.Orders.ReinstateOrder(ctx, late, r.e, r.event(ticketing.EventOrderPaid, late), at, []ticketing.Timer{tm})
		}, rivals)
		if reinstated {
			reinstatements++
			won++
		}
		st, err := r.st.Catalog.GetStock(ctx, ticketingtest.EventID, ticketing.EnvTest, "")
		if err != nil {
			t.Fatal(err)
		}
		s := st.Seats[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: "seat_1"}]
		if want := map[bool]string{true: ticketing.SeatSold, false: ticketing.SeatHeld}[reinstated]; won != 1 || s.Status != want {
			t.Fatalf("round %d: %d winners (reinstated %v), seat %+v; want 1 winner and the seat %s", round, won, reinstated, s, want)
		}
		wantLateOutcome(t, r, late, reinstated)
	}
	t.Logf("the reinstatement won %d of %d rounds", reinstatements, rounds)
}

func lateSold(t *testing.T, r *lateRace) int {
	t.Helper()
	st, err := r.st.Catalog.GetStock(context.Background(), ticketingtest.EventID, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	return st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: ticketingtest.GATier}]
}

// wantLateOutcome checks the order after the race: paid one version on when
// reinstated, else still cancelled at the version it had.
func wantLateOutcome(t *testing.T, r *lateRace, late *ticketing.Order, reinstated bool) {
	t.Helper()
	got, err := r.st.Orders.GetOrder(context.Background(), late.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, version := ticketing.OrderCancelled, late.Version
	if reinstated {
		want = ticketing.OrderPaid // late.Version moved on with the write
	}
	if got.Status != want || got.Version != version {
		t.Fatalf("order %s at version %d, want %s at %d", got.Status, got.Version, want, version)
	}
}
