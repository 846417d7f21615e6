package store_test

import (
	"context"
	"fmt"
	"testing"

	"tix/internal/store"
	"tix/internal/ticketing"
)

// seatsIn checks where each seat's item is: in its block's partition with
// state want ("" none), and nowhere in the event's own partition when its
// block is another.
func seatsIn(t *testing.T, st *store.Store, e *ticketing.Event, want string, seats ...string) {
	t.Helper()
	ctx := context.Background()
	for _, seat := range seats {
		b := e.SeatBlock(seat)
		got, err := st.SeatStateAt(ctx, e.ID, ticketing.EnvTest, ticketing.NoOccurrence, seat, b)
		if err != nil || got != want {
			t.Fatalf("%s in block %d: state %q (%v), want %q", seat, b, got, err, want)
		}
		if b == 0 {
			continue
		}
		if got, _ := st.SeatStateAt(ctx, e.ID, ticketing.EnvTest, ticketing.NoOccurrence, seat, 0); got != "" {
			t.Fatalf("%s (block %d) has an item in the event's own partition: %q", seat, b, got)
		}
	}
}

// seatStates is what the event's stock reads (StockOf, as availability and
// the seat map; GetStock, as the dashboard and the import check) show of the
// seats; both must agree.
func seatStates(t *testing.T, st *store.Store, e *ticketing.Event) map[string]string {
	t.Helper()
	ctx := context.Background()
	a, err := st.Catalog.StockOf(ctx, e, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Catalog.GetStock(ctx, e.ID, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, s := range a.Seats {
		out[k.ID] = s.Status
		if b.Seats[k].Status != s.Status {
			t.Fatalf("seat %s: StockOf %q, GetStock %q", k.ID, s.Status, b.Seats[k].Status)
		}
	}
	if len(b.Seats) != len(a.Seats) {
		t.Fatalf("StockOf %d seats, GetStock %d", len(a.Seats), len(b.Seats))
	}
	return out
}

// A seated event of the block layout keeps each seat's item in its block's
// partition on every path: hold, extension, release, order, payment,
// refund; the stock reads see them there. The one-partition layout keeps
// them all in the event's own partition, as before.
func TestSeatBlocks_EveryPathUsesTheSeatsPartition(t *testing.T) {
	for _, blocks := range []int{0, ticketing.SeatBlocks} {
		t.Run(fmt.Sprintf("blocks=%d", blocks), func(t *testing.T) {
			env := newSalesEnvWith(t, 10, blocks)
			ctx := context.Background()
			e, err := env.st.Catalog.GetEvent(ctx, salesOrg, salesEvent, ticketing.EnvTest)
			if err != nil {
				t.Fatal(err)
			}
			moved := 0
			for i := 1; i <= 4; i++ {
				if e.SeatBlock(fmt.Sprintf("seat_%d", i)) != 0 {
					moved++
				}
			}
			if (blocks == 0) != (moved == 0) {
				t.Fatalf("%d of 4 seats outside block 0 with %d blocks", moved, blocks)
			}
			ev := salesEvent
			h, err := env.sales.Holds.CreateHold(ctx, env.c, "", ticketing.HoldRequest{EventID: &ev, SeatIDs: []string{"seat_1", "seat_2", "seat_3", "seat_4"}})
			if err != nil {
				t.Fatal(err)
			}
			seatsIn(t, env.st, e, ticketing.SeatHeld, "seat_1", "seat_2", "seat_3", "seat_4")
			if got := seatStates(t, env.st, e); len(got) != 4 || got["seat_3"] != ticketing.SeatHeld {
				t.Fatalf("stock shows %v, want 4 held seats", got)
			}
			rids := func(i ...int) []string {
				var out []string
				for _, k := range i {
					out = append(out, h.Seats[k].ReservationID)
				}
				return out
			}
			if _, err := env.sales.Holds.ExtendHold(ctx, env.c, ticketing.ExtendRequest{ReservationIDs: rids(0, 1, 2, 3)}); err != nil {
				t.Fatalf("extend: %v", err)
			}
			if n, err := env.sales.Holds.ReleaseHolds(ctx, env.c, rids(3)); err != nil || n != 1 {
				t.Fatalf("released %d (%v), want 1", n, err)
			}
			seatsIn(t, env.st, e, "", "seat_4")
			res, err := env.sales.Orders.CreateOrder(ctx, env.c, "order-1", seatRequest(rids(0, 1, 2)...))
			if err != nil {
				t.Fatal(err)
			}
			seatsIn(t, env.st, e, ticketing.SeatReserved, "seat_1", "seat_2", "seat_3")
			if _, err := env.sales.Orders.Simulate(ctx, env.c.Tenant, res.Order.ID, ticketing.OutcomePaid); err != nil {
				t.Fatal(err)
			}
			seatsIn(t, env.st, e, ticketing.SeatSold, "seat_1", "seat_2", "seat_3")
			if got := seatStates(t, env.st, e); len(got) != 3 || got["seat_1"] != ticketing.SeatSold {
				t.Fatalf("stock shows %v, want 3 sold seats", got)
			}
			if _, err := env.sales.Orders.RefundOrder(ctx, env.c.Tenant, res.Order.ID, nil); err != nil {
				t.Fatal(err)
			}
			if o, err := env.sales.Tests.RefundOutcome(ctx, env.c.Tenant, res.Order.ID, "settle"); err != nil || o.Status != ticketing.OrderRefunded { // settles now (the test helper)
				t.Fatalf("refund settled: %v, %v; want the order refunded", o, err)
			}
			seatsIn(t, env.st, e, "", "seat_1", "seat_2", "seat_3")
			if got := seatStates(t, env.st, e); len(got) != 0 {
				t.Fatalf("stock shows %v after the refund, want every seat free", got)
			}
		})
	}
}

// An imported event gets the block layout when it is new and keeps the
// layout it has when it exists, so that seats sold in the one-partition
// layout are never looked for elsewhere (no migration).
func TestSeatBlocks_ImportKeepsAnExistingEventsLayout(t *testing.T) {
	env := newSalesEnv(t, 10) // the one-partition layout
	ctx := context.Background()
	old, err := env.st.Catalog.GetCatalogEvent(ctx, salesOrg, salesEvent)
	if err != nil {
		t.Fatal(err)
	}
	fresh := *old
	fresh.ID, fresh.Ref, fresh.Slug = "evt_sales_new", "s2", nil
	again := *old
	if err := env.st.Catalog.ImportCatalog(ctx, salesOrg, []*ticketing.Event{&again, &fresh}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{salesEvent: 0, "evt_sales_new": ticketing.SeatBlocks} {
		e, err := env.st.Catalog.GetCatalogEvent(ctx, salesOrg, id)
		if err != nil || e.SeatBlocks != want {
			t.Fatalf("%s after the import: %d seat blocks (%v), want %d", id, e.SeatBlocks, err, want)
		}
	}
}
