package ticketing_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/ticketcode"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
	"tix/internal/webhook"
)

// door is the domain's door: ticket keys and check-ins over the in-memory store.
type door struct {
	*domain
	keys *ticketing.TicketKeys
	in   *ticketing.CheckIns
}

func newDoor(t *testing.T) *door {
	t.Helper()
	d := newDomain(t)
	box, err := webhook.NewAESBox("t:dGl4LWRvbWFpbi10ZXN0LWtleXJpbmctMzItYnl0ZSE=")
	if err != nil {
		t.Fatal(err)
	}
	keys := &ticketing.TicketKeys{Store: d.st.TicketKeys, Box: box, Clock: d.clk}
	return &door{domain: d, keys: keys, in: &ticketing.CheckIns{Store: d.st.Tickets, Keys: keys, Catalog: d.st.Catalog, Clock: d.clk}}
}

// paid orders qty GA tickets, pays and returns the order with its codes.
func (d *door) paid(t *testing.T, key string, qty int) (*ticketing.Order, string, map[string]string) {
	t.Helper()
	o := d.order(t, key, gaOrder(qty))
	p, err := d.sales.Orders.Simulate(context.Background(), d.c.Tenant, o.ID, ticketing.OutcomePaid)
	if err != nil {
		t.Fatal(err)
	}
	orderCode, codes, err := d.keys.TicketCodes(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return p, orderCode, codes
}

func (d *door) scan(t *testing.T, code, gate string, opts ...func(*ticketing.Scan)) *ticketing.ScanResult {
	t.Helper()
	sc := ticketing.Scan{Code: code, Gate: gate, KeyID: "key_door"}
	for _, o := range opts {
		o(&sc)
	}
	res, err := d.in.Scan(context.Background(), d.c.Tenant, sc)
	if err != nil {
		t.Fatalf("scan %s: %v", code, err)
	}
	return res
}

func wantResult(t *testing.T, res *ticketing.ScanResult, want string) {
	t.Helper()
	if res.Result != want {
		t.Fatalf("result %s (%+v), want %s", res.Result, res, want)
	}
}

func TestCheckIn_ATicketIsAdmittedOnceAndLaterScansSeeTheFirst(t *testing.T) {
	d := newDoor(t)
	o, _, codes := d.paid(t, "door-1", 2)
	first := d.scan(t, codes[o.Tickets[0].Number], "north")
	wantResult(t, first, ticketing.ResultAdmitted)
	if first.TicketNumber != o.Tickets[0].Number || first.CheckIn == nil || first.CheckIn.Gate != "north" {
		t.Fatalf("admission %+v", first)
	}
	d.clk.Advance(time.Minute)
	again := d.scan(t, codes[o.Tickets[0].Number], "south")
	wantResult(t, again, ticketing.ResultAlreadyAdmitted)
	if again.CheckIn == nil || again.CheckIn.Gate != "north" || !again.CheckIn.At.Equal(first.CheckIn.At) || again.CheckIn.ID != first.CheckIn.ID {
		t.Errorf("already admitted shows %+v, want the first scan %+v", again.CheckIn, first.CheckIn)
	}
	// A typed number, in any case, is the same ticket.
	wantResult(t, d.scan(t, strings.ToLower(o.Tickets[0].Number), "south"), ticketing.ResultAlreadyAdmitted)
	wantResult(t, d.scan(t, " "+o.Tickets[1].Number+" ", "south"), ticketing.ResultAdmitted)
	tk, err := d.sales.Orders.Tickets(context.Background(), d.c.Tenant, o.ID)
	if err != nil || tk.Tickets[0].Status != ticketing.TicketUsed || tk.Tickets[1].Status != ticketing.TicketUsed {
		t.Errorf("tickets after both were admitted: %+v %v", tk, err)
	}
}

func TestCheckIn_AnOrdersCodeAdmitsEveryTicketOnce(t *testing.T) {
	d := newDoor(t)
	o, orderCode, codes := d.paid(t, "door-order", 3)
	wantResult(t, d.scan(t, codes[o.Tickets[1].Number], "north"), ticketing.ResultAdmitted)
	res := d.scan(t, orderCode, "south")
	wantResult(t, res, ticketing.ResultAdmitted)
	got := []string{}
	for _, one := range res.Tickets {
		got = append(got, one.Result)
	}
	if strings.Join(got, ",") != "admitted,already_admitted,admitted" || res.TicketNumber != o.TicketNumber {
		t.Errorf("order code: %v (%+v)", got, res)
	}
	wantResult(t, d.scan(t, orderCode, "west"), ticketing.ResultAlreadyAdmitted)
	// The typed order-level number reads its tickets from the refused write.
	wantResult(t, d.scan(t, o.TicketNumber, "west"), ticketing.ResultAlreadyAdmitted)

	o2, _, _ := d.paid(t, "door-order-2", 2)
	typed := d.scan(t, o2.TicketNumber, "west")
	if typed.Result != ticketing.ResultAdmitted || len(typed.Tickets) != 2 || typed.Tickets[1].Result != ticketing.ResultAdmitted {
		t.Errorf("typed order number: %+v", typed)
	}
}

func TestCheckIn_ForgedAlteredForeignAndUnknownCodesAreInvalid(t *testing.T) {
	d := newDoor(t)
	o, _, codes := d.paid(t, "door-bad", 2)
	code := codes[o.Tickets[0].Number]
	other := ticketing.Tenant{OrganizerID: "org_other", Environment: ticketing.EnvTest}
	foreign, err := d.keys.Sign(context.Background(), other, o.TicketClaims(o.Tickets[0]))
	if err != nil {
		t.Fatal(err)
	}
	live := o.TicketClaims(o.Tickets[0])
	live.Live = true
	liveCode, _ := d.keys.Sign(context.Background(), d.c.Tenant, live)
	for name, bad := range map[string]string{
		"another ticket's number": strings.Replace(code, o.Tickets[0].Number, o.Tickets[1].Number, 1),
		"another order":           strings.Replace(code, o.ID, "ord_forged", 1),
		"a seat added":            strings.Replace(code, `"quantity":1`, `"seat_id":"seat_1","quantity":1`, 1),
		"another organizer's key": foreign,
		"the live environment's":  liveCode,
		"not a code":              "{not json",
		"an unknown number":       "TIX-222222",
		"not a number":            "hello",
	} {
		wantResult(t, d.scan(t, bad, "north"), ticketing.ResultInvalid)
		_ = name
	}
	wantResult(t, d.scan(t, code, "north"), ticketing.ResultAdmitted) // nothing above admitted it
	for _, sc := range []ticketing.Scan{{Code: "", Gate: "north"}, {Code: code, Gate: ""}, {Code: code, Gate: strings.Repeat("g", 65)}, {Code: code, Gate: "a\nb"}} {
		_, err := d.in.Scan(context.Background(), d.c.Tenant, sc)
		var e *ticketing.Error
		if !errors.As(err, &e) || e.Code != ticketing.CodeInvalidRequest || (e.Param != "code" && e.Param != "gate") {
			t.Errorf("scan %+v: %v, want invalid_request on code or gate", sc, err)
		}
	}
}

func TestCheckIn_WrongEventAndBoundKeysWriteNothing(t *testing.T) {
	d := newDoor(t)
	o, orderCode, codes := d.paid(t, "door-event", 2)
	code := codes[o.Tickets[0].Number]
	wantResult(t, d.scan(t, code, "north", func(s *ticketing.Scan) { s.EventID = "evt_other" }), ticketing.ResultWrongEvent)
	wantResult(t, d.scan(t, code, "north", func(s *ticketing.Scan) { s.Events = []string{"evt_other"} }), ticketing.ResultWrongEvent)
	wantResult(t, d.scan(t, code, "north", func(s *ticketing.Scan) { s.OccurrenceID = "occ_other" }), ticketing.ResultWrongEvent)
	wantResult(t, d.scan(t, orderCode, "north", func(s *ticketing.Scan) { s.Events = []string{"evt_other"} }), ticketing.ResultWrongEvent)
	wantResult(t, d.scan(t, o.Tickets[1].Number, "north", func(s *ticketing.Scan) { s.Events = []string{"evt_other"} }), ticketing.ResultWrongEvent)
	bound := func(s *ticketing.Scan) {
		s.Events = []string{"evt_other", ticketingtest.EventID}
		s.EventID = ticketingtest.EventID
	}
	wantResult(t, d.scan(t, code, "north", bound), ticketing.ResultAdmitted)
	wantResult(t, d.scan(t, o.Tickets[1].Number, "south", bound), ticketing.ResultAdmitted)
	st, err := d.in.Stats(context.Background(), d.c.Tenant, ticketingtest.EventID, "", nil)
	if err != nil || st.Sold != 2 || st.Admitted != 2 || st.Gates["north"] != 1 || st.Gates["south"] != 1 {
		t.Errorf("stats %+v %v", st, err)
	}
	_, err = d.in.Stats(context.Background(), d.c.Tenant, ticketingtest.EventID, "", []string{"evt_other"})
	wantCode(t, err, ticketing.CodeNotFound, "")
	_, err = d.in.Stats(context.Background(), ticketing.Tenant{OrganizerID: "org_other", Environment: ticketing.EnvTest}, ticketingtest.EventID, "", nil)
	wantCode(t, err, ticketing.CodeNotFound, "")
}

func TestCheckIn_RefundAndAdmissionExcludeEachOther(t *testing.T) {
	d := newDoor(t)
	ctx := context.Background()
	used, _, usedCodes := d.paid(t, "door-used", 2)
	wantResult(t, d.scan(t, usedCodes[used.Tickets[1].Number], "north"), ticketing.ResultAdmitted)
	_, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, used.ID, nil)
	wantCode(t, err, ticketing.CodeConflict, "")
	if !strings.Contains(err.Error(), "admitted") {
		t.Errorf("refund of a used order: %v", err)
	}
	// The other ticket was not locked by the refused refund: it is admitted.
	wantResult(t, d.scan(t, usedCodes[used.Tickets[0].Number], "north"), ticketing.ResultAdmitted)

	refunded, _, codes := d.paid(t, "door-refunded", 1)
	if _, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, refunded.ID, nil); err != nil {
		t.Fatal(err)
	}
	wantResult(t, d.scan(t, codes[refunded.Tickets[0].Number], "north"), ticketing.ResultRefunded) // in progress
	d.clk.Advance(2 * time.Minute)
	if o, err := d.sales.Orders.Order(ctx, d.c.Tenant, refunded.ID); err != nil || o.Status != ticketing.OrderRefunded {
		t.Fatalf("refund did not complete: %+v %v", o, err)
	}
	wantResult(t, d.scan(t, refunded.Tickets[0].Number, "north"), ticketing.ResultRefunded)

	// The acquirer does not take the refund (the test provider refuses a
	// cancelled request): the tickets are unlocked.
	refused, _, rcodes := d.paid(t, "door-refused", 1)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	_, err = d.sales.Orders.RefundOrder(gone, d.c.Tenant, refused.ID, nil)
	wantCode(t, err, ticketing.CodePaymentProviderError, "")
	wantResult(t, d.scan(t, rcodes[refused.Tickets[0].Number], "north"), ticketing.ResultAdmitted)
}

func TestCheckIn_ConcurrentScansOfOneTicketAdmitItOnce(t *testing.T) {
	d := newDoor(t)
	o, _, codes := d.paid(t, "door-race", 1)
	var mu sync.Mutex
	results := map[string]int{}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			res, err := d.in.Scan(context.Background(), d.c.Tenant, ticketing.Scan{Code: codes[o.Tickets[0].Number], Gate: []string{"n", "s", "e", "w"}[i%4]})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			results[res.Result]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if results[ticketing.ResultAdmitted] != 1 || results[ticketing.ResultAlreadyAdmitted] != 19 {
		t.Errorf("results %v, want 1 admitted and 19 already admitted", results)
	}
}

func TestCheckIn_RetryWithTheIdempotencyKeyAnswersTheSameAdmission(t *testing.T) {
	d := newDoor(t)
	o, _, codes := d.paid(t, "door-idem", 1)
	withKey := func(k string) func(*ticketing.Scan) { return func(s *ticketing.Scan) { s.IdempotencyKey = k } }
	first := d.scan(t, codes[o.Tickets[0].Number], "north", withKey("scan-1"))
	again := d.scan(t, codes[o.Tickets[0].Number], "north", withKey("scan-1"))
	wantResult(t, again, ticketing.ResultAdmitted)
	if again.CheckIn.ID != first.CheckIn.ID {
		t.Errorf("retry gave check-in %s, want %s", again.CheckIn.ID, first.CheckIn.ID)
	}
	wantResult(t, d.scan(t, codes[o.Tickets[0].Number], "north", withKey("scan-2")), ticketing.ResultAlreadyAdmitted)
	wantResult(t, d.scan(t, codes[o.Tickets[0].Number], "north"), ticketing.ResultAlreadyAdmitted)
}

func TestCheckIn_UndoLetsTheTicketInAgainOnce(t *testing.T) {
	d := newDoor(t)
	ctx := context.Background()
	o, _, codes := d.paid(t, "door-undo", 1)
	first := d.scan(t, codes[o.Tickets[0].Number], "north")
	other := ticketing.Tenant{OrganizerID: "org_other", Environment: ticketing.EnvTest}
	_, err := d.in.Undo(ctx, other, first.CheckIn.ID)
	wantCode(t, err, ticketing.CodeNotFound, "")
	undone, err := d.in.Undo(ctx, d.c.Tenant, first.CheckIn.ID)
	if err != nil || undone.ID != first.CheckIn.ID {
		t.Fatalf("undo: %+v %v", undone, err)
	}
	_, err = d.in.Undo(ctx, d.c.Tenant, first.CheckIn.ID)
	wantCode(t, err, ticketing.CodeNotFound, "")
	_, err = d.in.Undo(ctx, d.c.Tenant, "chk_bogus")
	wantCode(t, err, ticketing.CodeNotFound, "")
	wantResult(t, d.scan(t, codes[o.Tickets[0].Number], "south"), ticketing.ResultAdmitted)
}

func TestCheckIn_CancelledEventAndRotatedKeys(t *testing.T) {
	d := newDoor(t)
	ctx := context.Background()
	o, _, codes := d.paid(t, "door-rotate", 2)
	if _, err := d.keys.Rotate(ctx, d.c.Tenant, time.Hour); err != nil {
		t.Fatal(err)
	}
	wantResult(t, d.scan(t, codes[o.Tickets[0].Number], "north"), ticketing.ResultAdmitted) // within the overlap
	d.clk.Advance(time.Hour)
	wantResult(t, d.scan(t, codes[o.Tickets[1].Number], "north"), ticketing.ResultInvalid) // past it
	_, fresh, err := d.keys.TicketCodes(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	ks, _ := d.keys.KeySet(ctx, d.c.Tenant)
	if c, err := ticketcode.Verify(fresh[o.Tickets[1].Number], *ks, d.clk.Now()); err != nil || c.TicketNumber != o.Tickets[1].Number {
		t.Fatalf("a freshly signed code does not verify: %v", err)
	}

	e := ticketingtest.Event(d.now)
	e.Status = ticketing.EventCancelled
	if err := d.st.Catalog.PutEvent(ctx, e); err != nil {
		t.Fatal(err)
	}
	cancelled := &ticketing.CheckIns{Store: d.st.Tickets, Keys: d.keys, Catalog: d.st.Catalog, Clock: d.clk}
	res, err := cancelled.Scan(ctx, d.c.Tenant, ticketing.Scan{Code: fresh[o.Tickets[1].Number], Gate: "north"})
	if err != nil || res.Result != ticketing.ResultCancelled {
		t.Fatalf("a cancelled event's ticket: %+v %v", res, err)
	}
	res, err = cancelled.Scan(ctx, d.c.Tenant, ticketing.Scan{Code: o.Tickets[1].Number, Gate: "north"})
	if err != nil || res.Result != ticketing.ResultCancelled {
		t.Fatalf("a cancelled event's typed ticket: %+v %v", res, err)
	}
	if tk, _ := d.sales.Orders.Tickets(ctx, d.c.Tenant, o.ID); tk.Tickets[1].Status != ticketing.TicketIssued {
		t.Errorf("a refused typed scan left the ticket %s", tk.Tickets[1].Status)
	}
}
