package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/config"
	"tix/internal/payment"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
	"tix/internal/webhook"
)

// The door's store types implement their ports (asserted here, not in
// ports.go: see there).
var (
	_ ticketing.TicketStore    = (*store.Tickets)(nil)
	_ ticketing.TicketKeyStore = (*store.TicketKeys)(nil)
)

// doorStack is the sales service and the door over DynamoDB Local.
type doorStack struct {
	st     *store.Store
	sales  *ticketing.Sales
	keys   *ticketing.TicketKeys
	in     *ticketing.CheckIns
	tenant ticketing.Tenant
}

func newDoorStack(t *testing.T) *doorStack {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	clk := clock.NewFixed(now)
	st := testenv.Store(t, clk)
	e := ticketingtest.Event(now)
	e.Tiers[0].Capacity = 100 // the GA tier: a round of the refund race sells one
	if err := st.Catalog.PutEvent(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	pay := payment.NewTest(payment.TestOptions{RefundSettleAfter: time.Minute})
	settings := ticketing.DefaultSalesSettings
	settings.TokenSecret = testenv.CursorSecret
	stores := st.Sales()
	stores.Tickets = st.Tickets() // as app.EnableDoor wires it
	sales := ticketing.NewSales(stores, &ticketing.SalesDeps{Clock: clk, Settings: settings,
		Payments: func(context.Context, string, ticketing.Environment) (ticketing.PaymentProvider, error) {
			return pay, nil
		}})
	box, err := webhook.NewAESBox(config.LocalKeyring)
	if err != nil {
		t.Fatal(err)
	}
	keys := &ticketing.TicketKeys{Store: st.TicketKeys(), Box: box, Clock: clk}
	return &doorStack{st: st, sales: sales, keys: keys, in: &ticketing.CheckIns{Store: st.Tickets(), Keys: keys, Catalog: st.Catalog, Clock: clk},
		tenant: ticketing.Tenant{OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest}}
}

// paid is a paid order of qty GA tickets, with its order code and ticket codes.
func (s *doorStack) paid(t *testing.T, key string, qty int) (*ticketing.Order, string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	email, tier := "door@example.com", ticketingtest.GATier
	res, err := s.sales.Orders.CreateOrder(ctx, ticketing.Caller{Tenant: s.tenant, KeyID: "key_door"}, key,
		ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty})
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.sales.Orders.Simulate(ctx, s.tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil {
		t.Fatal(err)
	}
	orderCode, codes, err := s.keys.TicketCodes(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return o, orderCode, codes
}

// scanAll scans code n times at once from four gates and counts the results.
func (s *doorStack) scanAll(t *testing.T, code string, n int) (map[string]int, []*ticketing.ScanResult) {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	var all []*ticketing.ScanResult
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			res, err := s.in.Scan(context.Background(), s.tenant, ticketing.Scan{Code: code, Gate: []string{"north", "south", "east", "west"}[i%4], KeyID: "key_door"})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("scan %d: %v", i, err)
				return
			}
			counts[res.Result]++
			all = append(all, res)
		})
	}
	close(start)
	wg.Wait()
	return counts, all
}

// Twenty scanners at four gates scan one ticket at the same instant on
// DynamoDB Local: exactly one admits it, the others see that admission.
func TestTickets_TwentyParallelScansFromFourGatesAdmitOnce(t *testing.T) {
	t.Parallel()
	s := newDoorStack(t)
	o, orderCode, codes := s.paid(t, "race-1", 3)
	counts, all := s.scanAll(t, codes[o.Tickets[0].Number], 20)
	if counts[ticketing.ResultAdmitted] != 1 || counts[ticketing.ResultAlreadyAdmitted] != 19 {
		t.Fatalf("results %v, want 1 admitted and 19 already admitted", counts)
	}
	var first string
	for _, r := range all {
		if r.Result == ticketing.ResultAdmitted {
			first = r.CheckIn.ID
		}
	}
	for _, r := range all {
		if r.CheckIn == nil || r.CheckIn.ID != first {
			t.Errorf("a scan shows check-in %+v, want the one admission %s", r.CheckIn, first)
		}
	}
	// The order's code: its other two tickets are admitted by one scan only.
	counts, all = s.scanAll(t, orderCode, 20)
	if counts[ticketing.ResultAdmitted] != 1 || counts[ticketing.ResultAlreadyAdmitted] != 19 {
		t.Fatalf("order code results %v, want 1 admitted", counts)
	}
	admitted := map[string]int{}
	for _, r := range all {
		for _, one := range r.Tickets {
			if one.Result == ticketing.ResultAdmitted {
				admitted[one.TicketNumber]++
			}
		}
	}
	if len(admitted) != 2 || admitted[o.Tickets[0].Number] != 0 || admitted[o.Tickets[1].Number] != 1 || admitted[o.Tickets[2].Number] != 1 {
		t.Errorf("order code admissions per ticket %v", admitted)
	}
	// A typed number of another order's ticket, the same way.
	o2, _, _ := s.paid(t, "race-2", 1)
	if counts, _ := s.scanAll(t, o2.Tickets[0].Number, 20); counts[ticketing.ResultAdmitted] != 1 {
		t.Errorf("typed number results %v, want 1 admitted", counts)
	}
}

// A check-in and a refund of the same order race: never both. Either the
// ticket is admitted and the refund is 409, or the refund starts and the
// door answers refunded.
func TestTickets_CheckInRacingARefundNeverBothSucceed(t *testing.T) {
	t.Parallel()
	s := newDoorStack(t)
	ctx := context.Background()
	outcomes := map[string]int{}
	for i := range 12 {
		o, _, codes := s.paid(t, "refund-race-"+string(rune('a'+i)), 1)
		var res *ticketing.ScanResult
		var scanErr, refundErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			res, scanErr = s.in.Scan(ctx, s.tenant, ticketing.Scan{Code: codes[o.Tickets[0].Number], Gate: "north"})
		})
		wg.Go(func() { <-start; _, refundErr = s.sales.Orders.RefundOrder(ctx, s.tenant, o.ID, nil) })
		close(start)
		wg.Wait()
		if scanErr != nil {
			t.Fatal(scanErr)
		}
		var e *ticketing.Error
		refused := errors.As(refundErr, &e) && e.Code == ticketing.CodeConflict
		after, err := s.sales.Orders.Order(ctx, s.tenant, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkIns, err := s.st.Tickets().CheckIns(ctx, ticketing.EnvTest, []string{o.Tickets[0].Number})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case res.Result == ticketing.ResultAdmitted && refused && after.Refund == nil && len(checkIns) == 1:
			outcomes["admitted"]++
		case res.Result == ticketing.ResultRefunded && refundErr == nil && after.Refund != nil && len(checkIns) == 0:
			outcomes["refunded"]++
		default:
			t.Fatalf("round %d: scan %s, refund %v, order refund %+v, check-ins %v", i, res.Result, refundErr, after.Refund, checkIns)
		}
	}
	t.Logf("outcomes %v", outcomes)
}

// Admitted tickets read as used; a refund after an admission is refused and
// leaves the order's other tickets admissible; the event's counts add up.
func TestTickets_UsedTicketsAndTheRefundRule(t *testing.T) {
	t.Parallel()
	s := newDoorStack(t)
	ctx := context.Background()
	o, _, codes := s.paid(t, "used-1", 2)
	if r, err := s.in.Scan(ctx, s.tenant, ticketing.Scan{Code: codes[o.Tickets[1].Number], Gate: "north"}); err != nil || r.Result != ticketing.ResultAdmitted {
		t.Fatalf("scan: %+v %v", r, err)
	}
	tk, err := s.sales.Orders.Tickets(ctx, s.tenant, o.ID)
	if err != nil || tk.Tickets[0].Status != ticketing.TicketIssued || tk.Tickets[1].Status != ticketing.TicketUsed {
		t.Fatalf("tickets %+v %v", tk, err)
	}
	_, err = s.sales.Orders.RefundOrder(ctx, s.tenant, o.ID, nil)
	var e *ticketing.Error
	if !errors.As(err, &e) || e.Code != ticketing.CodeConflict {
		t.Fatalf("refund after an admission: %v, want conflict", err)
	}
	if r, err := s.in.Scan(ctx, s.tenant, ticketing.Scan{Code: o.Tickets[0].Number, Gate: "north"}); err != nil || r.Result != ticketing.ResultAdmitted {
		t.Fatalf("the other ticket after the refused refund: %+v %v", r, err)
	}
	refunding, _, _ := s.paid(t, "used-2", 1)
	if _, err := s.sales.Orders.RefundOrder(ctx, s.tenant, refunding.ID, nil); err != nil {
		t.Fatal(err)
	}
	stats, err := s.in.Stats(ctx, s.tenant, ticketingtest.EventID, "", nil)
	if err != nil || stats.Sold != 2 || stats.Admitted != 2 || stats.Refunded != 1 || stats.Gates["north"] != 2 || len(stats.Gates) != 1 {
		t.Errorf("stats %+v %v: want 2 sold, both admitted at north, 1 refunded", stats, err)
	}
	if _, err := s.in.Stats(ctx, s.tenant, ticketingtest.EventID, "", []string{"evt_other"}); !errors.Is(err, ticketing.ErrNotFound) {
		t.Errorf("stats for a key bound to another event: %v", err)
	}
	undone, err := s.in.Undo(ctx, s.tenant, tk.Tickets[1].Number)
	if err == nil {
		t.Fatalf("undo by ticket number: %+v", undone)
	}
}
