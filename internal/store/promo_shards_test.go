package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// One limited promo code at the model's rate, with DynamoDB's transaction
// conflicts (testenv.ConflictProxy, stretched as in
// TestOnSaleAtTheModelsRateUnderTransactionConflicts): orders keep coming
// after the code is used up. Exactly max_uses orders get it; every other
// one is refused as used up, but for some of those racing the other
// orders in flight (at most as many as are in flight at once) for the last
// uses, which are asked to retry (ErrContended); the shards of its counter
// hold exactly the orders' uses, none past its part; a
// cancelled order gives its use back to the shard it took, which a
// reinstatement takes again.
func TestLimitedPromoCodeAtTheModelsRateUnderTransactionConflicts(t *testing.T) {
	const (
		orders  = 300
		maxUses = 200
	)
	st, proxy, now := atModelsRate(t)
	ctx := context.Background()
	ev := promoEvent(now, maxUses)
	if err := st.Catalog.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	caps := ticketing.PromoShardCaps(ev, maxUses)
	if len(caps) != ticketing.MaxStockShards {
		t.Fatalf("%d shards for a code of %d uses, want %d", len(caps), maxUses, ticketing.MaxStockShards)
	}

	var r promoResults
	offer(orders, func(i int) { r.order(ctx, st, ev, now, i) })
	got, usedUp, contended, failed, placed := len(r.placed), r.usedUp, r.contended, len(r.other), r.placed
	var firstErr error
	if failed > 0 {
		firstErr = r.other[0]
	}
	t.Logf("%d orders: %d got the code, %d refused as used up, %d asked to retry, %d failed; %d transactions, %d cancelled for a conflict; hottest %v",
		orders, got, usedUp, contended, failed, proxy.Transactions(), proxy.Conflicts(), proxy.Hottest(3))
	if proxy.Conflicts() == 0 {
		t.Fatal("no transaction was cancelled for a conflict: the proxy did not put the items under load")
	}
	inFlight := int(modelRate * modelHold / time.Second)
	if failed > 0 || got != maxUses || contended > inFlight || usedUp+contended != orders-maxUses {
		t.Fatalf("%d got the code, %d refused as used up, %d asked to retry, %d failed (the first: %v); want %d, the rest used up (at most %d asked to retry), none failed",
			got, usedUp, contended, failed, firstErr, maxUses, inFlight)
	}
	wantPromoShards(t, st, ev, placed)

	// Give two uses back, take one again by a reinstatement.
	back := placed[:2]
	for _, o := range back {
		c := *o
		c.Status, c.CancelReason = ticketing.OrderCancelled, "expired"
		ce := &ticketing.OrderEvent{ID: "evt_pc" + o.ID[len(o.ID)-12:], Type: ticketing.EventOrderCancelled, OrganizerID: o.OrganizerID,
			Environment: o.Environment, CreatedAt: now, Order: c.Webhook()}
		if err := st.Orders.CancelOrder(ctx, &c, ce, now, false); err != nil {
			t.Fatal(err)
		}
		*o = c
	}
	wantPromoShards(t, st, ev, placed[2:])
	late := *back[0]
	paid := now
	late.Status, late.PaidAt, late.TicketNumber, late.CancelReason = ticketing.OrderPaid, &paid, "TIX-PC000001", ""
	le := &ticketing.OrderEvent{ID: "evt_pr" + late.ID[len(late.ID)-12:], Type: ticketing.EventOrderPaid, OrganizerID: late.OrganizerID,
		Environment: late.Environment, CreatedAt: now, Order: late.Webhook()}
	if err := st.Orders.ReinstateOrder(ctx, &late, ev, le, now, nil); err != nil {
		t.Fatal(err)
	}
	wantPromoShards(t, st, ev, append([]*ticketing.Order{&late}, placed[2:]...))
}

// Orders racing for one code on DynamoDB Local, all at once: exactly
// max_uses get it, every other one is refused as used up, and the
// shards hold exactly the uses.
func TestLimitedPromoCodeRace(t *testing.T) {
	const maxUses, orders = 40, 120
	now := time.Now().UTC().Truncate(time.Second)
	st := testenv.Store(t, clock.NewFixed(now))
	ctx := context.Background()
	ev := promoEvent(now, maxUses)
	ev.ID = "evt_race_pc"
	if err := st.Catalog.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	var (
		wg sync.WaitGroup
		r  promoResults
	)
	for i := range orders {
		wg.Go(func() { r.order(ctx, st, ev, now, i) })
	}
	wg.Wait()
	placed, other := r.placed, r.other
	if r.contended > 0 {
		other = append(other, fmt.Errorf("%d orders asked to retry without conflicts", r.contended))
	}
	if len(placed) != maxUses || len(other) > 0 {
		t.Fatalf("%d of %d orders got a code of %d uses; other errors: %v", len(placed), orders, maxUses, other)
	}
	wantPromoShards(t, st, ev, placed)
}

// promoResults gathers what concurrent orders with the code got.
type promoResults struct {
	mu                sync.Mutex
	placed            []*ticketing.Order
	usedUp, contended int
	other             []error
}

// order creates order i with the code and counts its outcome.
func (r *promoResults) order(ctx context.Context, st *store.Store, ev *ticketing.Event, now time.Time, i int) {
	o := promoOrder(ev, now, i)
	err := st.Orders.CreateOrder(ctx, o, ev, now)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		r.placed = append(r.placed, o)
	case errors.Is(err, ticketing.ErrPromoExhausted):
		r.usedUp++
	case errors.Is(err, ticketing.ErrContended):
		r.contended++
	default:
		r.other = append(r.other, err)
	}
}

// wantPromoShards checks that the code's shards hold exactly the uses of
// orders, each on the shard its order names, none past its part, and that
// PromoUses counts them all.
func wantPromoShards(t *testing.T, st *store.Store, ev *ticketing.Event, orders []*ticketing.Order) {
	t.Helper()
	ctx := context.Background()
	p, _ := ev.Promo("ONSALE")
	caps := ticketing.PromoShardCaps(ev, p.MaxUses)
	want := map[int]int{}
	for _, o := range orders {
		want[o.Promo.Shard]++
	}
	stock, err := st.Catalog.GetStock(ctx, ev.ID, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	got := stock.Promos["ONSALE"]
	for sh := range caps {
		if got[sh] != want[sh] || got[sh] > caps[sh] {
			t.Fatalf("shard %d holds %d uses, its orders %d, its part %d", sh, got[sh], want[sh], caps[sh])
		}
	}
	if len(want) < 2 {
		t.Fatalf("the uses of %d orders are on %d shard(s), want them spread", len(orders), len(want))
	}
	if n, err := st.Catalog.PromoUses(ctx, ev, ticketing.EnvTest, p); err != nil || n > len(orders) {
		t.Fatalf("PromoUses %d, %v; want at most %d", n, err, len(orders))
	}
}

// promoEvent is a general-admission event with one code of maxUses uses.
func promoEvent(now time.Time, maxUses int) *ticketing.Event {
	ev := ticketingtest.Event(now)
	ev.ID, ev.Ref, ev.HasSeating, ev.Seating, ev.Zones = "evt_onsale_pc", "onsale-pc", false, nil, nil
	ev.Tiers = []ticketing.Tier{{ID: "tier_pc", Name: "GA", Price: 150000, Capacity: 20000, PersonsIncluded: 1}}
	ev.Promos = []ticketing.Promo{{Code: "ONSALE", Type: ticketing.PromoPercent, Value: 10, MaxUses: maxUses}}
	return ev
}

// promoOrder is order i of one ticket with the code.
func promoOrder(ev *ticketing.Event, now time.Time, i int) *ticketing.Order {
	return &ticketing.Order{ID: fmt.Sprintf("ord_pc%014d", i), OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest,
		Type: ticketing.OrderTypeTicket, Status: ticketing.OrderPending, EventID: ev.ID, EventTitle: ev.Title,
		Lines:    []ticketing.OrderLine{{TierID: "tier_pc", TierName: "GA", UnitPrice: 150000, Quantity: 1}},
		Quantity: 1, Currency: "RUB", BasePrice: 150000, Discount: 15000, TotalPrice: 135000,
		Promo: &ticketing.AppliedPromo{Code: "ONSALE", Type: ticketing.PromoPercent, Value: 10, Discount: 15000, Limited: true},
		Buyer: ticketing.Buyer{Email: fmt.Sprintf("p%d@example.com", i)}, KeyID: "key_pc", CreatedAt: now, ExpiresAt: now.Add(15 * time.Minute)}
}

// The code's last uses are on one shard (of two uses, one left after an
// order takes it) while that order's transaction still holds it: the next
// order waits for the shard and gets the last use instead of being
// refused as used up, and only the order after it, when a consistent read
// shows every shard used up, is refused.
func TestLimitedPromoCodeLastUseOnAHeldShard(t *testing.T) {
	const maxUses = ticketing.MaxStockShards + 1 // shard 0 counts two uses, the others one
	st, proxy, now := testenv.StoreUnderConflicts(t, 2*time.Second, 100*time.Millisecond)
	ctx := context.Background()
	ev := promoEvent(now, maxUses)
	ev.ID = "evt_held_pc"
	if err := st.Catalog.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if caps := ticketing.PromoShardCaps(ev, maxUses); caps[0] != 2 || caps[1] != 1 {
		t.Fatalf("shard parts %v, want 2 on shard 0, 1 on the others", caps[:2])
	}
	for sh := 1; sh < ticketing.MaxStockShards; sh++ {
		if err := st.PutPromoUses(ctx, ev.ID, ticketing.EnvTest, "ONSALE", sh, 1); err != nil {
			t.Fatal(err)
		}
	}
	var placed []*ticketing.Order
	for i, want := range []error{nil, nil, ticketing.ErrPromoExhausted} {
		o := promoOrder(ev, now, i)
		err := st.Orders.CreateOrder(ctx, o, ev, now)
		if !errors.Is(err, want) && (want != nil || err != nil) {
			t.Fatalf("order %d: %v, want %v (%d transactions, %d cancelled for a conflict)", i, err, want, proxy.Transactions(), proxy.Conflicts())
		}
		if err == nil {
			placed = append(placed, o)
		}
	}
	if proxy.Conflicts() == 0 {
		t.Fatal("no transaction met the held shard")
	}
	stock, err := st.Catalog.GetStock(ctx, ev.ID, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := stock.Promos["ONSALE"][0]; got != 2 || placed[0].Promo.Shard != 0 || placed[1].Promo.Shard != 0 {
		t.Fatalf("shard 0 holds %d uses (orders on shards %d, %d), want both of its 2", got, placed[0].Promo.Shard, placed[1].Promo.Shard)
	}
}
