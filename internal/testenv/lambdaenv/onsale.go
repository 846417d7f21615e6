package lambdaenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// The on-sale event of AddOnSale: general-admission tiers of the sizes a real
// on-sale has, whose stock is split over counter shards (ticketing.ShardCaps),
// so that its reads and refusals take the table paths a 10-place tier never
// does (BatchGetItem of the shards).
const (
	OnSaleEvent = "evt_onsale"
	// BigTier has 5,000 places (16 shards), none sold: the event's detail,
	// tiers and availability read its shards by key.
	BigTier = "tier_big"
	// SoldOutTier has 1,000 places, all sold: an order is refused with 409
	// after its shards are read.
	SoldOutTier = "tier_soldout"
	// LastTier has 128 places (two shards of 64) and 2 left, one in each
	// shard: a late payment of 2 is reinstated only by reading the shards
	// and taking one place from each.
	LastTier = "tier_last"
)

// AddOnSale creates the on-sale event of org_l (OnSaleEvent) and, through the
// real sales service, a cancelled test order of 2 LastTier places whose
// payment can arrive late; it then sells the rest of SoldOutTier and all but
// SOLDOUT_TIER_ID and LATE_ORDER_ID to Vars.
func (e *Env) AddOnSale(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	e.PutOnSaleEvent(t)
	late := e.LateOrder(t, ticketing.EnvTest)
	if o, err := e.App.Sales.Orders.Simulate(ctx, tenant, late, ticketing.OutcomeCancelled); err != nil || o.Status != ticketing.OrderCancelled || o.Payment == nil {
		t.Fatalf("cancel the late order: %+v %v", o, err)
	}
	e.SellOnSale(t, ticketing.EnvTest)
	e.Vars["ONSALE_EVENT_ID"] = OnSaleEvent
	e.Vars["SOLDOUT_TIER_ID"] = SoldOutTier
	e.Vars["LATE_ORDER_ID"] = late
}

// PutOnSaleEvent stores the on-sale event (no stock sold).
func (e *Env) PutOnSaleEvent(t *testing.T) {
	t.Helper()
	if err := e.App.Store.Catalog.PutEvent(context.Background(), onSaleEvent()); err != nil {
		t.Fatal(err)
	}
}

func onSaleEvent() *ticketing.Event {
	now := time.Now().UTC().Truncate(time.Second)
	return &ticketing.Event{ID: OnSaleEvent, OrganizerID: "org_l", Ref: "onsale", Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "On-sale Night", City: "Kazan", Venue: "Arena", StartsAt: now.Add(72 * time.Hour), EndsAt: now.Add(75 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{
			{ID: BigTier, Name: "Floor", Price: 300000, Capacity: 5000, PersonsIncluded: 1, Color: "#00AA00"},
			{ID: SoldOutTier, Name: "Balcony", Price: 200000, Capacity: 1000, PersonsIncluded: 1, Color: "#0000AA"},
			{ID: LastTier, Name: "Box", Price: 900000, Capacity: 128, PersonsIncluded: 1, Color: "#AA0000"},
		},
	}
}

// LateOrder creates, through the real sales service, a pending order of 2
// LastTier places in environment env (a live one starts its payment at the
// bank) and returns its id.
func (e *Env) LateOrder(t *testing.T, env ticketing.Environment) string {
	t.Helper()
	tier, qty, email := LastTier, 2, "late@example.com"
	c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: tenant.OrganizerID, Environment: env}, KeyID: e.keyID}
	res, err := e.App.Sales.Orders.CreateOrder(context.Background(), c, "fixture-late-"+string(env), ticketing.OrderRequest{
		Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Order.ID
}

// SellOnSale sells, in environment env, all of SoldOutTier (one order of
// 1,000 fills every shard) and all but 2 places of LastTier (two orders of 63
// leave one place in each shard: the second goes to the shard the first left
// with room for it). The orders are pending store orders.
func (e *Env) SellOnSale(t *testing.T, env ticketing.Environment) {
	t.Helper()
	ev, now := onSaleEvent(), time.Now().UTC()
	for i, take := range []struct {
		tier string
		qty  int
	}{{SoldOutTier, 1000}, {LastTier, 63}, {LastTier, 63}} {
		o := &ticketing.Order{ID: fmt.Sprintf("ord_onsale_%s_fill%d", env, i), OrganizerID: "org_l", Environment: env,
			Type: ticketing.OrderTypeTicket, Status: ticketing.OrderPending, EventID: OnSaleEvent, EventTitle: ev.Title,
			Lines: []ticketing.OrderLine{{TierID: take.tier, TierName: "fill", UnitPrice: 1, Quantity: take.qty}}, Quantity: take.qty,
			Currency: "RUB", BasePrice: int64(take.qty), TotalPrice: int64(take.qty), Buyer: ticketing.Buyer{Email: "fill@example.com"},
			KeyID: e.keyID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := e.App.Store.Orders.CreateOrder(context.Background(), o, ev, now); err != nil {
			t.Fatalf("sell %d of %s: %v", take.qty, take.tier, err)
		}
	}
}
