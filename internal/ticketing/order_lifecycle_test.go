package ticketing_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

func TestOrder_StateMachine(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		move   func(t *testing.T, d *domain, o *ticketing.Order)
		status ticketing.OrderStatus
		sold   int
		events []string
	}{
		{"pending stays pending", func(*testing.T, *domain, *ticketing.Order) {}, ticketing.OrderPending, 2, nil},
		{"pending -> paid", func(t *testing.T, d *domain, o *ticketing.Order) {
			if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomePaid); err != nil {
				t.Fatal(err)
			}
		}, ticketing.OrderPaid, 2, []string{ticketing.EventOrderPaid}},
		{"pending -> cancelled by the payment", func(t *testing.T, d *domain, o *ticketing.Order) {
			if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomeCancelled); err != nil {
				t.Fatal(err)
			}
		}, ticketing.OrderCancelled, 0, []string{ticketing.EventOrderCancelled}},
		{"pending -> cancelled at its expiry, on read", func(t *testing.T, d *domain, o *ticketing.Order) {
			d.clk.Set(o.ExpiresAt)
		}, ticketing.OrderCancelled, 0, []string{ticketing.EventOrderCancelled}},
		{"pending -> cancelled by its timer", func(t *testing.T, d *domain, o *ticketing.Order) {
			d.clk.Set(o.ExpiresAt.Add(d.sales.Deps.Settings.SweepGrace)) // the message was lost
			if n, err := d.sales.Orders.SweepDue(ctx, 10); n != 1 || err != nil {
				t.Fatalf("sweep %d, %v", n, err)
			}
			if n, _ := d.sales.Orders.SweepDue(ctx, 10); n != 0 {
				t.Fatal("the expiry is owed twice")
			}
		}, ticketing.OrderCancelled, 0, []string{ticketing.EventOrderCancelled}},
		{"paid -> refunded once the refund settles", func(t *testing.T, d *domain, o *ticketing.Order) {
			if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomePaid); err != nil {
				t.Fatal(err)
			}
			r, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, o.ID, nil)
			if err != nil || r.Status != ticketing.RefundPending {
				t.Fatalf("refund %+v, %v", r, err)
			}
			d.clk.Set(*r.SettleAt)
		}, ticketing.OrderRefunded, 0, []string{ticketing.EventOrderPaid, ticketing.EventOrderRefunded}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDomain(t)
			o := d.order(t, "k", gaOrder(2))
			c.move(t, d, o)
			got, err := d.sales.Orders.Order(ctx, d.c.Tenant, o.ID)
			if err != nil || got.Status != c.status {
				t.Fatalf("order %v, %v; want %s", got, err, c.status)
			}
			if n := d.gaSold(t); n != c.sold {
				t.Fatalf("sold %d, want %d", n, c.sold)
			}
			var types []string
			last := int64(1) // the version of the created order
			for _, ev := range d.st.Outbox.OrderEvents() {
				types = append(types, ev.Type)
				// Versions grow with every change; the last event carries the
				// version the order has now.
				if ev.Order.Version <= last {
					t.Fatalf("%s carries version %d after %d", ev.Type, ev.Order.Version, last)
				}
				last = ev.Order.Version
			}
			if len(types) > 0 && last != got.Webhook().Version {
				t.Fatalf("the last event carries version %d, the order is at %d", last, got.Webhook().Version)
			}
			if len(types) != len(c.events) || (len(types) > 0 && types[len(types)-1] != c.events[len(c.events)-1]) {
				t.Fatalf("outbox %v, want %v", types, c.events)
			}
			// Each event is published once its transition committed.
			if pub := d.publishedTypes(o.ID); len(pub) != len(c.events) || (len(pub) > 0 && !reflect.DeepEqual(pub, c.events)) {
				t.Fatalf("published %v, want %v", pub, c.events)
			}
		})
	}
}

func TestOrder_StaleTransitionsAreRefused(t *testing.T) {
	ctx := context.Background()
	d := newDomain(t)
	cancelled := d.order(t, "c", gaOrder(1))
	if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, cancelled.ID, ticketing.OutcomeCancelled); err != nil {
		t.Fatal(err)
	}
	if _, err := d.sales.Orders.PaymentConfirmed(ctx, cancelled); !errors.Is(err, ticketing.ErrStateChanged) {
		t.Fatalf("paying a cancelled order from its stale copy: %v", err)
	}
	_, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, cancelled.ID, ticketing.OutcomePaid)
	wantCode(t, err, ticketing.CodeConflict, "")
	_, err = d.sales.Orders.RefundOrder(ctx, d.c.Tenant, cancelled.ID, nil)
	wantCode(t, err, ticketing.CodeConflict, "")
	_, err = d.sales.Orders.Tickets(ctx, d.c.Tenant, cancelled.ID)
	wantCode(t, err, ticketing.CodeConflict, "")

	paid := d.order(t, "p", gaOrder(1))
	if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, paid.ID, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	if again, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, paid.ID, ticketing.OutcomePaid); err != nil || again.Status != ticketing.OrderPaid {
		t.Fatalf("paying twice: %v, %v; want the paid order unchanged", again, err)
	}
	_, err = d.sales.Orders.Simulate(ctx, d.c.Tenant, paid.ID, ticketing.OutcomeCancelled)
	wantCode(t, err, ticketing.CodeConflict, "")
	if err := d.sales.Orders.HandleTimer(ctx, ticketing.Timer{Kind: ticketing.TimerOrderExpiry, OrderID: paid.ID, Due: paid.ExpiresAt}); err != nil {
		t.Fatalf("a paid order's expiry timer: %v", err)
	}
	if _, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, paid.ID, nil); err != nil {
		t.Fatal(err)
	}
	_, err = d.sales.Orders.RefundOrder(ctx, d.c.Tenant, paid.ID, nil)
	wantCode(t, err, ticketing.CodeConflict, "")
	d.clk.Advance(time.Hour)
	r, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, paid.ID, nil)
	if err != nil || r.Status != ticketing.RefundCompleted {
		t.Fatalf("refunding a refunded order: %+v, %v; want the completed refund", r, err)
	}
	got, _ := d.sales.Orders.Order(ctx, d.c.Tenant, paid.ID)
	if got.Status != ticketing.OrderRefunded || got.Tickets[0].Status != ticketing.TicketRefunded {
		t.Fatalf("order %+v, want refunded with refunded tickets", got)
	}
	if err := d.sales.Orders.HandleTimer(ctx, ticketing.Timer{Kind: ticketing.TimerOrderExpiry, OrderID: "ord_gone"}); err != nil {
		t.Fatalf("a timer of a missing order: %v", err)
	}
}

func TestOrder_ReadsAreTenantScoped(t *testing.T) {
	ctx := context.Background()
	d := newDomain(t)
	o := d.order(t, "k", gaOrder(1))
	for name, tenant := range map[string]ticketing.Tenant{
		"another organizer": {OrganizerID: "org_other", Environment: ticketing.EnvTest},
		"live environment":  {OrganizerID: ticketingtest.Org, Environment: ticketing.EnvLive},
	} {
		if _, err := d.sales.Orders.Order(ctx, tenant, o.ID); !ticketing.IsCode(err, ticketing.CodeNotFound) {
			t.Errorf("%s read the order: %v", name, err)
		}
	}
	if _, err := d.sales.Orders.Order(ctx, d.c.Tenant, "ord_missing"); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Errorf("missing order: %v", err)
	}
	if _, err := d.sales.Orders.OrderByPollToken(ctx, o.ID, d.sales.Deps.PollToken(o.ID)); err != nil {
		t.Errorf("poll token: %v", err)
	}
	_, err := d.sales.Orders.OrderByPollToken(ctx, o.ID, d.sales.Deps.PollToken("ord_other"))
	wantCode(t, err, ticketing.CodeUnauthorized, "")
}

func TestSeatOrder_FromHoldToSoldSeat(t *testing.T) {
	ctx := context.Background()
	d := newDomain(t)
	h, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_1", "seat_2"))
	if err != nil {
		t.Fatal(err)
	}
	rids := []string{h.Seats[0].ReservationID, h.Seats[1].ReservationID}
	req := ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: ptr("a@example.com")}, SeatReservationIDs: &rids}
	o := d.order(t, "seats", req)
	if o.Quantity != 2 || o.TotalPrice != 600000 || o.Lines[1].Seat.SeatID != "seat_2" {
		t.Fatalf("seat order %+v", o)
	}
	_, err = d.sales.Orders.CreateOrder(ctx, d.c, "seats-again", req)
	wantCode(t, err, ticketing.CodeSeatConflict, "seat_reservation_ids")
	h2, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_3"))
	if err != nil {
		t.Fatal(err)
	}
	d.clk.Set(h2.ExpiresAt)
	_, err = d.sales.Orders.CreateOrder(ctx, d.c, "late", ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: ptr("a@example.com")},
		SeatReservationIDs: &[]string{h2.Seats[0].ReservationID}})
	wantCode(t, err, ticketing.CodeSeatConflict, "seat_reservation_ids")
}
