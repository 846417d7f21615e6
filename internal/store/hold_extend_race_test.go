package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/ticketing"
)

// salesAt is env's sales service with a clock of its own, as another process
// whose clock reads at.
func (env *salesEnv) salesAt(at time.Time) *ticketing.Sales {
	d := *env.sales.Deps
	d.Clock = clock.NewFixed(at)
	return ticketing.NewSales(env.st.Sales(), &d)
}

// A hold's extension racing its expiry on DynamoDB Local: the extender's
// clock reads just before the expiry, another buyer's (holding the same seat)
// just after. The hold either extends (and the buyer gets seat_conflict) or
// expires (the buyer gets the seat and the extension 410), never both.
func TestConcurrency_HoldExtensionAndExpiryRace(t *testing.T) {
	outcomes := map[string]int{}
	for round := range 6 {
		env := newSalesEnv(t, 10)
		ctx := context.Background()
		email := "buyer@example.com"
		evt := salesEvent
		req := ticketing.HoldRequest{EventID: &evt, SeatIDs: []string{"seat_1", "seat_2"}}
		h, err := env.sales.Holds.CreateHold(ctx, env.c, "", req)
		if err != nil {
			t.Fatal(err)
		}
		extender := env.salesAt(h.ExpiresAt.Add(-time.Millisecond))
		taker := env.salesAt(h.ExpiresAt.Add(time.Millisecond))
		other := env.c
		other.KeyID = "key_other"
		var extended, taken atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if (i+round)%2 == 0 {
					_, err := extender.Holds.ExtendHold(ctx, env.c, ticketing.ExtendRequest{ReservationIDs: []string{h.Seats[0].ReservationID, h.Seats[1].ReservationID}})
					switch {
					case err == nil:
						extended.Add(1)
					case !ticketing.IsCode(err, ticketing.CodeHoldExpired) && !ticketing.IsCode(err, ticketing.CodeConflict):
						t.Errorf("extend: %v", err)
					}
					return
				}
				_, err := taker.Holds.CreateHold(ctx, other, "", ticketing.HoldRequest{EventID: &evt, SeatIDs: []string{"seat_2"}})
				switch {
				case err == nil:
					taken.Add(1)
				case !ticketing.IsCode(err, ticketing.CodeSeatConflict):
					t.Errorf("hold: %v", err)
				}
			})
		}
		wg.Wait()
		switch {
		case extended.Load() > 0 && taken.Load() == 0:
			outcomes["extended"]++
			// The hold's seats are still its own after the first expiry: ordered from it.
			o, err := taker.Orders.CreateOrder(ctx, env.c, "from-hold", ticketing.OrderRequest{
				Buyer: &ticketing.BuyerInput{Email: &email}, SeatReservationIDs: &[]string{h.Seats[1].ReservationID}})
			if err != nil || o.Order.Status != ticketing.OrderPending {
				t.Fatalf("round %d: order from the extended hold: %v", round, err)
			}
		case extended.Load() == 0 && taken.Load() == 1:
			outcomes["expired"]++
		default:
			t.Fatalf("round %d: %d extensions and %d holds of the seat succeeded", round, extended.Load(), taken.Load())
		}
	}
	t.Logf("outcomes over the rounds: %v", outcomes)
}
