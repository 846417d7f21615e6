package ticketing_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/inmem"
	"tix/internal/payment"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// domain is the Sales service over the in-memory store: no emulator, no HTTP.
// It holds the conformance suite's event (a GA tier of 5, four seats, a promo
// code usable once) and a pricing event with several tiers and promo codes.
type domain struct {
	st      *inmem.Store
	sales   *ticketing.Sales
	clk     *clock.Fixed
	c       ticketing.Caller
	now     time.Time
	payDown atomic.Bool
	queue   *queue
}

// queue is the domain's timers queue and event publisher: it keeps what was
// scheduled and published, in order, and delivers nothing.
type queue struct {
	mu        sync.Mutex
	timers    []ticketing.Timer
	published []string
}

func (q *queue) Schedule(_ context.Context, t ticketing.Timer) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.timers = append(q.timers, t)
	return nil
}

func (q *queue) Publish(_ context.Context, eventID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.published = append(q.published, eventID)
}

// scheduled are the timers of order id sent to the queue.
func (q *queue) scheduled(id string) []ticketing.Timer {
	q.mu.Lock()
	defer q.mu.Unlock()
	var ts []ticketing.Timer
	for _, t := range q.timers {
		if t.OrderID == id {
			ts = append(ts, t)
		}
	}
	return ts
}

// lastScheduled is the last timer of order id sent to the queue (zero: none).
func (q *queue) lastScheduled(id string) ticketing.Timer {
	ts := q.scheduled(id)
	if len(ts) == 0 {
		return ticketing.Timer{}
	}
	return ts[len(ts)-1]
}

// publishedTypes are the types of the outbox events of order id that were
// published, in order.
func (d *domain) publishedTypes(id string) []string {
	d.queue.mu.Lock()
	defer d.queue.mu.Unlock()
	var types []string
	for _, evID := range d.queue.published {
		ev, _, err := d.st.Outbox.GetOrderEvent(context.Background(), evID)
		if err == nil && ev.Order.ID == id {
			types = append(types, ev.Type)
		}
	}
	return types
}

// Pricing event fixture.
const (
	priceEvent = "evt_price"
	priceGA    = "tier_price_ga"    // general admission, 1,500.00
	priceFront = "tier_price_front" // standing, 2,500.00
	priceBack  = "tier_price_back"  // standing, 999.99
	priceFree  = "tier_price_free"  // general admission, free
)

func newDomain(t *testing.T) *domain {
	t.Helper()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	d := &domain{st: inmem.New(), clk: clock.NewFixed(now), now: now, queue: &queue{},
		c: ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest}, KeyID: "key_1", IP: "192.0.2.1"}}
	ctx := context.Background()
	for _, e := range []*ticketing.Event{ticketingtest.Event(now), pricingEvent(now)} {
		if err := d.st.Catalog.PutEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	settings := ticketing.DefaultSalesSettings
	settings.TokenSecret = []byte("domain-test-secret-0123456789")
	pay := payment.NewTest(payment.TestOptions{RefundSettleAfter: time.Minute, Fail: func(ticketing.PaymentRequest) error {
		if d.payDown.Load() {
			return errors.New("provider down")
		}
		return nil
	}})
	d.sales = ticketing.NewSales(d.st.Sales(), &ticketing.SalesDeps{Clock: d.clk, Settings: settings, Timers: d.queue, Events: d.queue,
		Payments: func(context.Context, string, ticketing.Environment) (ticketing.PaymentProvider, error) {
			return pay, nil
		}})
	return d
}

func pricingEvent(now time.Time) *ticketing.Event {
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	return &ticketing.Event{ID: priceEvent, OrganizerID: ticketingtest.Org, Ref: "price", Status: ticketing.EventPublished,
		Kind: ticketing.KindSingle, Title: "Pricing", City: "Moscow", Venue: "Club", StartsAt: now.Add(48 * time.Hour),
		EndsAt: now.Add(50 * time.Hour), Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{
			{ID: priceGA, Name: "GA", Price: 150000, Capacity: 100, PersonsIncluded: 1},
			{ID: priceFront, Name: "Front", Price: 250000, Capacity: 50, PersonsIncluded: 1, ZoneID: "zone_front"},
			{ID: priceBack, Name: "Back", Price: 99999, Capacity: 50, PersonsIncluded: 1, ZoneID: "zone_back"},
			{ID: priceFree, Name: "Free", Price: 0, Capacity: 50, PersonsIncluded: 1},
		},
		Zones: []ticketing.ZoneSummary{
			{ID: "zone_front", Name: "Front", Type: ticketing.ZoneStanding, PrimaryTierID: priceFront},
			{ID: "zone_back", Name: "Back", Type: ticketing.ZoneStanding, PrimaryTierID: priceBack},
		},
		Promos: []ticketing.Promo{
			{Code: "PCT10", Type: ticketing.PromoPercent, Value: 10},
			{Code: "PCT15", Type: ticketing.PromoPercent, Value: 15},
			{Code: "FIX500", Type: ticketing.PromoFixed, Value: 50000},
			{Code: "HUGE", Type: ticketing.PromoFixed, Value: 100000000},
			{Code: "FRONT20", Type: ticketing.PromoPercent, Value: 20, TierIDs: []string{priceFront}},
			{Code: "EXPIRED", Type: ticketing.PromoPercent, Value: 50, EndsAt: &past},
			{Code: "LATER", Type: ticketing.PromoPercent, Value: 50, StartsAt: &future},
			{Code: "ONCE", Type: ticketing.PromoFixed, Value: 10000, MaxUses: 1},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// gaOrder is POST /orders for qty tickets of the conformance event's GA tier.
func gaOrder(qty int) ticketing.OrderRequest {
	return ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: ptr("buyer@example.com")},
		TierID: ptr(ticketingtest.GATier), Quantity: &qty}
}

func (d *domain) gaSold(t *testing.T) int {
	t.Helper()
	st, err := d.st.Catalog.GetStock(context.Background(), ticketingtest.EventID, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	return st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: ticketingtest.GATier}]
}

func (d *domain) order(t *testing.T, key string, req ticketing.OrderRequest) *ticketing.Order {
	t.Helper()
	res, err := d.sales.Orders.CreateOrder(context.Background(), d.c, key, req)
	if err != nil {
		t.Fatalf("create order %s: %v", key, err)
	}
	return res.Order
}

// wantCode fails unless err is a ticketing error with code (and param, when given).
func wantCode(t *testing.T, err error, code ticketing.Code, param string) {
	t.Helper()
	var e *ticketing.Error
	if !errors.As(err, &e) || e.Code != code || (param != "" && e.Param != param) {
		t.Fatalf("error %v, want %s (param %q)", err, code, param)
	}
}
