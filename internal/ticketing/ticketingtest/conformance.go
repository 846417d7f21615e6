// Package ticketingtest is the conformance suite of the sales store ports:
// every adapter (the DynamoDB store, the in-memory store) runs the same tests,
// so the domain may rely on one set of conditions whichever is wired in.
package ticketingtest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// Store is what the suite drives: the sales ports over one table, plus a
// way to seed events and to read the outbox events order changes write.
type Store struct {
	ticketing.SalesStores
	Events interface {
		PutEvent(ctx context.Context, e *ticketing.Event) error
	}
	Outbox interface {
		GetOrderEvent(ctx context.Context, id string) (ev *ticketing.OrderEvent, dispatched bool, err error)
	}
	Finder ticketing.OrderFinder // the buyer index and ticket numbers
}

// Fixture names of the seeded event.
const (
	Org      = "org_conf"
	EventID  = "evt_conf"
	GATier   = "tier_conf_ga"
	SeatTier = "tier_conf_seat"
	GACap    = 5
	Promo    = "ONCE"
)

// RunSalesStore runs every conformance test against stores made by newStore,
// one fresh store per test.
func RunSalesStore(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"MissingItemsAreNotFound", testMissingIsNotFound},
		{"TierEventFindsTheEvent", testTierEvent},
		{"IdempotencyRecordIsClaimedOnce", testIdempotency},
		{"HoldTakesFreeSeatsOnly", testHoldSeats},
		{"HoldIdempotencyAndIPRecord", testHoldConditions},
		{"ReleaseSeatOnlyByItsLiveReservation", testReleaseSeat},
		{"GeneralAdmissionNeverOversells", testGACapacity},
		{"ConcurrentOrdersNeverOversell", testConcurrentOrders},
		{"ShardedTierSellsOutAndGivesBackToItsShards", testShardedSellOut},
		{"OrderStateMachine", testOrderStates},
		{"CancelGivesStockBack", testCancel},
		{"SeatOrderFromItsReservation", testSeatOrder},
		{"TicketNumbersAreUniquePerEnvironment", testTicketNumbers},
		{"PromoCodeUsesAreCounted", testPromoUses},
		{"ClientCapLimitsPendingOrders", testClientCap},
		{"ClientCapCountsHeldSeatsOnce", testClientCapHolds},
		{"DueTimersFollowTheOrder", testDueTimers},
		{"ConfirmOverdueWhenTheAcquirerConfirmed", testConfirmOverdue},
		{"ConfirmOverdueOnlyWhileTheSeatsAreTheOrders", testConfirmOverdueSeats},
		{"CancelAndSaveOrderMoveCheckMarkers", testCheckMarkers},
		{"ReinstateTakesGeneralAdmissionAgain", testReinstateGA},
		{"ReinstateRefusedWritesNothing", testReinstateRefused},
		{"ReinstateSeatsOnlyWhenFree", testReinstateSeats},
		{"ReinstateRefusedForASoldSeat", testReinstateSoldSeat},
		{"FixedWindowBudgets", testBudgets},
		{"ListOrdersNewestFirst", testListOrders},
		{"FindOrdersByBuyerAndTicket", testFindOrders},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fixture{st: newStore(t), now: time.Now().UTC().Truncate(time.Second), ctx: context.Background()}
			f.seed(t)
			tc.run(t, f)
		})
	}
}

type fixture struct {
	st  Store
	now time.Time
	ctx context.Context
	ids atomic.Int64
}

// Event is the suite's event: a general-admission tier of capacity GACap, a
// seated tier of 4 seats (seat_1..seat_4) and a promo code usable once.
func Event(now time.Time) *ticketing.Event {
	row := "A"
	var seats []ticketing.Seat
	for i := 1; i <= 4; i++ {
		n := i
		seats = append(seats, ticketing.Seat{ID: fmt.Sprintf("seat_%d", i), Label: fmt.Sprintf("A-%d", i), Row: &row, Number: &n})
	}
	return &ticketing.Event{ID: EventID, OrganizerID: Org, Ref: "conf", Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "Conformance", City: "Moscow", Venue: "Hall", StartsAt: now.Add(72 * time.Hour), EndsAt: now.Add(75 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now, HasSeating: true,
		Tiers: []ticketing.Tier{
			{ID: GATier, Name: "GA", Price: 150000, Capacity: GACap, PersonsIncluded: 1},
			{ID: SeatTier, Name: "Seats", Price: 300000, Capacity: 4, PersonsIncluded: 1, ZoneID: "zone_c", Seated: true},
		},
		Zones: []ticketing.ZoneSummary{{ID: "zone_c", Name: "Stalls", Type: ticketing.ZoneSeated, PrimaryTierID: SeatTier, SeatCount: 4}},
		Seating: &ticketing.Seating{LayoutID: "lay_c", Zones: []ticketing.Zone{{ID: "zone_c", Name: "Stalls", Type: ticketing.ZoneSeated,
			PrimaryTierID: SeatTier, Seats: seats}}},
		Promos: []ticketing.Promo{{Code: Promo, Type: ticketing.PromoPercent, Value: 10, MaxUses: 1}},
	}
}

func (f *fixture) seed(t *testing.T) {
	t.Helper()
	if err := f.st.Events.PutEvent(f.ctx, Event(f.now)); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) event(t *testing.T) *ticketing.Event {
	t.Helper()
	e, err := f.st.Catalog.GetEvent(f.ctx, Org, EventID, ticketing.EnvTest)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (f *fixture) id(prefix string) string { return fmt.Sprintf("%s%08d", prefix, f.ids.Add(1)) }

// gaOrder is a pending order of qty general-admission tickets.
func (f *fixture) gaOrder(qty int) *ticketing.Order {
	return &ticketing.Order{ID: f.id("ord_c"), OrganizerID: Org, Environment: ticketing.EnvTest, Type: ticketing.OrderTypeTicket,
		Status: ticketing.OrderPending, EventID: EventID, EventTitle: "Conformance",
		Lines:    []ticketing.OrderLine{{TierID: GATier, TierName: "GA", UnitPrice: 150000, Quantity: qty}},
		Quantity: qty, Currency: "RUB", BasePrice: 150000 * int64(qty), TotalPrice: 150000 * int64(qty),
		Buyer: ticketing.Buyer{Email: "b@example.com"}, KeyID: "key_c", CreatedAt: f.now, ExpiresAt: f.now.Add(15 * time.Minute)}
}

// hold is a hold of the given seats, live for 15 minutes.
func (f *fixture) hold(seats ...string) *ticketing.Hold {
	id := f.id("hold_c0000000000")
	h := &ticketing.Hold{ID: id, OrganizerID: Org, Environment: ticketing.EnvTest, KeyID: "key_c", EventID: EventID,
		OccurrenceID: ticketing.NoOccurrence, CreatedAt: f.now, ExpiresAt: f.now.Add(15 * time.Minute)}
	for i, s := range seats {
		h.Seats = append(h.Seats, ticketing.HoldSeat{ReservationID: fmt.Sprintf("rsv_%s_%d", id, i), SeatID: s,
			Label: s, ZoneName: "Stalls", TierID: SeatTier, TierName: "Seats", Price: 300000})
	}
	return h
}

func (f *fixture) outboxEvent(typ string, o *ticketing.Order) *ticketing.OrderEvent {
	return &ticketing.OrderEvent{ID: f.id("evt_c"), Type: typ, OrganizerID: o.OrganizerID, Environment: o.Environment,
		CreatedAt: f.now, Order: o.Webhook()}
}

// pay moves o to paid with fresh ticket numbers.
func (f *fixture) pay(t *testing.T, o *ticketing.Order) {
	t.Helper()
	n := *o
	paid := f.now
	n.Status, n.PaidAt, n.TicketNumber = ticketing.OrderPaid, &paid, f.id("TIX-C")
	for range o.Quantity {
		n.Tickets = append(n.Tickets, ticketing.Ticket{Number: f.id("TIX-C"), Status: ticketing.TicketIssued})
	}
	if err := f.st.OrderStore.ConfirmOrder(f.ctx, &n, f.outboxEvent(ticketing.EventOrderPaid, &n), f.now, false); err != nil {
		t.Fatalf("confirm %s: %v", o.ID, err)
	}
	*o = n
}

func (f *fixture) stock(t *testing.T) *ticketing.Stock {
	t.Helper()
	st, err := f.st.Catalog.GetStock(f.ctx, EventID, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// promoUses reads the uses of the fixture's promo code of e.
func (f *fixture) promoUses(e *ticketing.Event) (int, error) {
	p, ok := e.Promo(Promo)
	if !ok {
		return 0, fmt.Errorf("event %s has no code %s", e.ID, Promo)
	}
	return f.st.Catalog.PromoUses(f.ctx, e, ticketing.EnvTest, p)
}

func (f *fixture) sold(t *testing.T) int {
	t.Helper()
	return f.stock(t).Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: GATier}]
}

func (f *fixture) seat(t *testing.T, id string) (ticketing.SeatState, bool) {
	t.Helper()
	s, ok := f.stock(t).Seats[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: id}]
	return s, ok
}

func wantIs(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

func wantStock(t *testing.T, what string, err error, index int, seat bool) {
	t.Helper()
	var se *ticketing.StockError
	if !errors.As(err, &se) || se.Index != index || se.Seat != seat {
		t.Fatalf("%s: %v (%+v), want a stock error at %d (seat %v)", what, err, se, index, seat)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
