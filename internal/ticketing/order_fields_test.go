package ticketing_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// The contract's derived order fields: is_paid only while paid, overdue from
// the instant the payment window ends, occurrence_tier_id only for an order
// of an occurrence, and livemode in the order's QR code from its environment.
func TestOrder_DerivedContractFields(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	lines := []ticketing.OrderLine{{TierID: "tier_a"}, {TierID: "tier_b"}}
	for _, c := range []struct {
		status  ticketing.OrderStatus
		paid    bool
		overdue bool // at ExpiresAt exactly
	}{
		{ticketing.OrderPending, false, true},
		{ticketing.OrderPaid, true, false},
		{ticketing.OrderRefunded, false, false},
		{ticketing.OrderCancelled, false, false},
	} {
		o := &ticketing.Order{Status: c.status, ExpiresAt: at, Lines: lines}
		if o.IsPaid() != c.paid || o.Overdue(at) != c.overdue || o.Overdue(at.Add(-time.Nanosecond)) {
			t.Errorf("%s: is_paid %v, overdue at expiry %v, a nanosecond before %v", c.status, o.IsPaid(), o.Overdue(at), o.Overdue(at.Add(-time.Nanosecond)))
		}
	}
	single := &ticketing.Order{Lines: lines}
	series := &ticketing.Order{OccurrenceID: "occ_1", Lines: lines}
	empty := &ticketing.Order{OccurrenceID: "occ_1"}
	if single.OccurrenceTierID() != "" || series.OccurrenceTierID() != "occ_1:tier_a" || empty.OccurrenceTierID() != "" {
		t.Errorf("occurrence_tier_id: single %q, series %q, no lines %q", single.OccurrenceTierID(), series.OccurrenceTierID(), empty.OccurrenceTierID())
	}
	if single.FirstTierID() != "tier_a" || empty.FirstTierID() != "" {
		t.Errorf("ticket_tier_id: %q, no lines %q", single.FirstTierID(), empty.FirstTierID())
	}
	live := &ticketing.Order{ID: "ord_1", Environment: ticketing.EnvLive}
	test := &ticketing.Order{ID: "ord_2", Environment: ticketing.EnvTest}
	if !strings.Contains(live.TicketQR(), `"livemode":true`) || !strings.Contains(test.TicketQR(), `"livemode":false`) {
		t.Errorf("QR livemode: live %s, test %s", live.TicketQR(), test.TicketQR())
	}
	wl, wt := live.Webhook(), test.Webhook()
	if !wl.Livemode || wt.Livemode || wl.EventID != nil {
		t.Errorf("webhook order: livemode live %v test %v, event_id of an order without one %v", wl.Livemode, wt.Livemode, wl.EventID)
	}
	if w := (&ticketing.Order{EventID: "evt_1", Lines: lines}).Webhook(); w.EventID == nil || *w.EventID != "evt_1" || w.TicketTierID == nil || *w.TicketTierID != "tier_a" {
		t.Errorf("webhook order: event_id %v, ticket_tier_id %v", w.EventID, w.TicketTierID)
	}
	if ticketing.CurrencyOf(&ticketing.Event{}) != "RUB" || ticketing.CurrencyOf(&ticketing.Event{Currency: "USD"}) != "USD" {
		t.Error("an event's currency: RUB when the catalog leaves it empty, else its own")
	}
}

// A storefront's (publishable key's) order counts against its client's unit
// cap, inclusive: exactly OrderIPMaxUnits tickets are sold, one more is refused.
func TestCreateOrder_PublishableOrderUpToTheClientsUnitCap(t *testing.T) {
	d := newDomain(t)
	d.sales.Deps.Settings.OrderIPMaxUnits = 2
	pk := d.c
	pk.Publishable = true
	_, err := d.sales.Orders.CreateOrder(context.Background(), pk, "three", gaOrder(3))
	wantCode(t, err, ticketing.CodeRateLimited, "")
	if _, err := d.sales.Orders.CreateOrder(context.Background(), pk, "two", gaOrder(2)); err != nil {
		t.Fatalf("an order at the cap: %v", err)
	}
}

// A storefront reads its order with the order's poll token: the right token
// answers the order, another order's token is refused, and a token for an
// order that does not exist answers not found.
func TestOrderByPollToken(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	o := d.order(t, "a", gaOrder(1))
	got, err := d.sales.Orders.OrderByPollToken(ctx, o.ID, d.sales.Deps.PollToken(o.ID))
	if err != nil || got == nil || got.ID != o.ID {
		t.Fatalf("by its poll token: %+v, %v", got, err)
	}
	_, err = d.sales.Orders.OrderByPollToken(ctx, o.ID, d.sales.Deps.PollToken("ord_other"))
	wantCode(t, err, ticketing.CodeUnauthorized, "")
	_, err = d.sales.Orders.OrderByPollToken(ctx, "ord_missing", d.sales.Deps.PollToken("ord_missing"))
	if !errors.Is(err, ticketing.ErrNotFound) {
		t.Fatalf("an unknown order with its token: %v, want not found", err)
	}
}

// Another organizer's tier is not found, as if it did not exist (the
// contract's tenancy rule): an order cannot be placed on it.
func TestCreateOrder_AnotherOrganizersTierIsNotFound(t *testing.T) {
	d := newDomain(t)
	other := d.c
	other.Tenant.OrganizerID = "org_other"
	_, err := d.sales.Orders.CreateOrder(context.Background(), other, "x", gaOrder(1))
	wantCode(t, err, ticketing.CodeNotFound, "tier_id")
	if n := d.gaSold(t); n != 0 {
		t.Fatalf("%d tickets sold to another organizer's caller", n)
	}
}

// An order from held seats must be created before the hold's expires_at: at
// that instant it is refused with seat_conflict naming the reservation, a
// nanosecond before it is sold.
func TestCreateOrder_FromAHoldUntilTheInstantItExpires(t *testing.T) {
	for _, c := range []struct {
		name   string
		before time.Duration
		sold   bool
	}{{"at expiry", 0, false}, {"a nanosecond before", time.Nanosecond, true}} {
		t.Run(c.name, func(t *testing.T) {
			d := newDomain(t)
			ctx := context.Background()
			h, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_1"))
			if err != nil {
				t.Fatal(err)
			}
			d.clk.Set(h.ExpiresAt.Add(-c.before))
			req := ticketing.OrderRequest{Buyer: gaOrder(1).Buyer, SeatReservationIDs: &[]string{h.Seats[0].ReservationID}}
			_, err = d.sales.Orders.CreateOrder(ctx, d.c, "o", req)
			if c.sold && err != nil {
				t.Fatalf("order: %v", err)
			}
			if !c.sold {
				wantCode(t, err, ticketing.CodeSeatConflict, "seat_reservation_ids")
			}
		})
	}
}
