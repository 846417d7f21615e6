package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/payment"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// bestRace is one section's best-available on-sale: buyers in parallel over
// several sales services (processes: each picks from its own view of the
// seats) on one store.
type bestRace struct {
	st     *store.Store
	ev     *ticketing.Event
	procs  []*ticketing.Sales
	now    time.Time
	seats  int
	buyers int
	qty    int
}

// raceProcs is how many processes the buyers spread over.
var raceProcs = 4

func newBestRace(t *testing.T, st *store.Store, now time.Time, rows, perRow, buyers, qty int) *bestRace {
	t.Helper()
	ev := ticketingtest.SectionEvent(now, "evt_best_race", ticketing.SeatBlocks,
		ticketingtest.Section{ID: "sec", Name: "Section", SortOrder: 1, Rows: rows, PerRow: perRow})
	if err := st.Catalog.PutEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	r := &bestRace{st: st, ev: ev, now: now, seats: rows * perRow, buyers: buyers, qty: qty}
	settings := ticketing.DefaultSalesSettings
	settings.TokenSecret = testenv.CursorSecret
	for range raceProcs {
		r.procs = append(r.procs, ticketing.NewSales(st.Sales(), &ticketing.SalesDeps{Clock: clock.NewFixed(now), Settings: settings,
			Payments: func(context.Context, string, ticketing.Environment) (ticketing.PaymentProvider, error) {
				return payment.NewTest(payment.TestOptions{}), nil
			}}))
	}
	return r
}

// run lets every buyer ask for qty best seats at once; it returns the holds
// made and how many buyers were told there were not enough seats.
func (r *bestRace) run(t *testing.T) ([]*ticketing.Hold, int) {
	t.Helper()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		holds    []*ticketing.Hold
		refused  int
		other    []error
		start    = make(chan struct{})
		evID     = r.ev.ID
		tier     = ticketingtest.SectionTier
		quantity = r.qty
	)
	for i := range r.buyers {
		wg.Go(func() {
			c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest}, KeyID: fmt.Sprintf("key_%d", i)}
			<-start
			h, err := r.procs[i%len(r.procs)].Holds.CreateHold(context.Background(), c, "",
				ticketing.HoldRequest{EventID: &evID, BestAvailable: &ticketing.BestAvailable{TierID: &tier, Quantity: &quantity}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				holds = append(holds, h)
			case ticketing.IsCode(err, ticketing.CodeSeatConflict):
				refused++
			default:
				other = append(other, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("%d buyers failed otherwise; the first: %v", len(other), other[0])
	}
	return holds, refused
}

// check proves the section consistent: every seat is held by exactly one
// buyer's hold or free; the stock holds each hold's seats for it and
// nothing else, so the free seats are the capacity less the held.
func (r *bestRace) check(t *testing.T, holds []*ticketing.Hold) {
	t.Helper()
	owner := map[string]string{}
	for _, h := range holds {
		if len(h.Seats) != r.qty {
			t.Fatalf("hold %s has %d seats, want %d", h.ID, len(h.Seats), r.qty)
		}
		for _, s := range h.Seats {
			if o, ok := owner[s.SeatID]; ok {
				t.Fatalf("seat %s held by %s and %s", s.SeatID, o, h.ID)
			}
			owner[s.SeatID] = h.ID
		}
	}
	stock, err := r.st.Catalog.StockOf(context.Background(), r.ev, ticketing.EnvTest, "")
	if err != nil {
		t.Fatal(err)
	}
	taken := 0
	for k, s := range stock.Seats {
		if !s.Taken(r.now) {
			continue
		}
		taken++
		if s.Status != ticketing.SeatHeld || owner[k.ID] != s.HoldID {
			t.Fatalf("seat %s is %s by %q in the stock, but no buyer holds it so (holder %q): stranded", k.ID, s.Status, s.HoldID, owner[k.ID])
		}
	}
	if taken != len(owner) {
		t.Fatalf("the stock has %d seats taken, the buyers hold %d", taken, len(owner))
	}
	free := r.seats - taken
	if free != r.seats-len(holds)*r.qty {
		t.Fatalf("%d seats free, want capacity %d less %d held", free, r.seats, len(holds)*r.qty)
	}
}

// 200 buyers ask for 2 best seats of one 400-seat section at once: no seat
// is held twice, none stranded; nearly every buyer gets seats within the
// bounded attempts, and every refusal is seat_conflict.
func TestConcurrency_BestAvailableNeverDoubleHolds(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	r := newBestRace(t, testenv.Store(t, clock.NewFixed(now)), now, 20, 20, 200, 2)
	holds, refused := r.run(t)
	t.Logf("%d of %d buyers hold seats, %d refused", len(holds), r.buyers, refused)
	r.check(t, holds)
	if len(holds) < r.buyers*3/4 {
		t.Fatalf("only %d of %d buyers got seats of %d free", len(holds), r.buyers, r.seats)
	}
}

// The same through testenv.ConflictProxy, which cancels a transaction
// touching a seat another transaction holds (TransactionConflict, as AWS
// does): still no seat held twice or stranded, and the retries stay bounded.
func TestConcurrency_BestAvailableUnderTransactionConflicts(t *testing.T) {
	st, proxy, now := testenv.StoreUnderConflicts(t, 20*time.Millisecond, 10*time.Millisecond)
	r := newBestRace(t, st, now, 20, 20, 200, 2)
	holds, refused := r.run(t)
	t.Logf("%d of %d buyers hold seats, %d refused; %d transactions, %d cancelled for a conflict",
		len(holds), r.buyers, refused, proxy.Transactions(), proxy.Conflicts())
	if proxy.Conflicts() == 0 {
		t.Fatal("no transaction was cancelled for a conflict: the proxy did not put the seats under load")
	}
	r.check(t, holds)
	if max := int64(r.buyers) * 8 * 8; proxy.Transactions() > max {
		t.Fatalf("%d transactions for %d buyers: retries unbounded", proxy.Transactions(), r.buyers)
	}
	if len(holds) < r.buyers/2 {
		t.Fatalf("only %d of %d buyers got seats of %d free", len(holds), r.buyers, r.seats)
	}
}
