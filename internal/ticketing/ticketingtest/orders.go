package ticketingtest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"tix/internal/ticketing"
)

func testGACapacity(t *testing.T, f *fixture) {
	e := f.event(t)
	a := f.gaOrder(3)
	must(t, "3 of 5", f.st.OrderStore.CreateOrder(f.ctx, a, e, f.now))
	if a.Version != 1 {
		t.Fatalf("new order version %d, want 1", a.Version)
	}
	wantStock(t, "3 more of 2 left", f.st.OrderStore.CreateOrder(f.ctx, f.gaOrder(3), e, f.now), 0, false)
	wantStock(t, "more than the capacity", f.st.OrderStore.CreateOrder(f.ctx, f.gaOrder(GACap+1), e, f.now), 0, false)
	must(t, "the last 2", f.st.OrderStore.CreateOrder(f.ctx, f.gaOrder(2), e, f.now))
	wantStock(t, "sold out", f.st.OrderStore.CreateOrder(f.ctx, f.gaOrder(1), e, f.now), 0, false)
	if n := f.sold(t); n != GACap {
		t.Fatalf("sold %d, want %d", n, GACap)
	}
	dup := f.gaOrder(1)
	dup.ID = a.ID
	wantIs(t, "an existing order id", f.st.OrderStore.CreateOrder(f.ctx, dup, e, f.now), ticketing.ErrOrderExists)
}

func testConcurrentOrders(t *testing.T, f *fixture) {
	e := f.event(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := f.st.OrderStore.CreateOrder(context.Background(), f.gaOrder(1), e, f.now)
			mu.Lock()
			defer mu.Unlock()
			var se *ticketing.StockError
			switch {
			case err == nil:
				ok++
			case errors.As(err, &se):
				refused++
			default:
				t.Errorf("concurrent order: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != GACap || refused != 12-GACap || f.sold(t) != GACap {
		t.Fatalf("%d orders, %d refused, sold %d; want %d orders", ok, refused, f.sold(t), GACap)
	}
}

func testOrderStates(t *testing.T, f *fixture) {
	o := f.gaOrder(2)
	must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, f.event(t), f.now))
	stale := *o
	o.Payment = &ticketing.Payment{Provider: "sbp", ID: "pay_1", Payload: "https://qr.nspk.ru/x", ExpiresAt: o.ExpiresAt}
	must(t, "set payment", f.st.OrderStore.SetPayment(f.ctx, o))
	if o.Version != 2 {
		t.Fatalf("version after the payment %d, want 2", o.Version)
	}
	wantIs(t, "a write from a stale version", f.st.OrderStore.SetPayment(f.ctx, &stale), ticketing.ErrStateChanged)
	got, err := f.st.OrderStore.GetOrder(f.ctx, o.ID)
	if err != nil || got.Version != 2 || got.Payment == nil || got.Payment.ID != "pay_1" || got.Status != ticketing.OrderPending {
		t.Fatalf("stored order %+v, %v", got, err)
	}
	overdue := *o
	overdue.Status = ticketing.OrderPaid
	wantIs(t, "confirm past the expiry", f.st.OrderStore.ConfirmOrder(f.ctx, &overdue, f.outboxEvent(ticketing.EventOrderPaid, &overdue), o.ExpiresAt, false), ticketing.ErrStateChanged)
	wantIs(t, "cancel overdue-only before the expiry",
		f.st.OrderStore.CancelOrder(f.ctx, o, f.outboxEvent(ticketing.EventOrderCancelled, o), f.now, true), ticketing.ErrStateChanged)
	f.pay(t, o)
	again := *o
	again.Version--
	wantIs(t, "confirm twice", f.st.OrderStore.ConfirmOrder(f.ctx, &again, f.outboxEvent(ticketing.EventOrderPaid, &again), f.now, false), ticketing.ErrStateChanged)
	wantIs(t, "cancel a paid order", f.st.OrderStore.CancelOrder(f.ctx, o, f.outboxEvent(ticketing.EventOrderCancelled, o), f.now, false), ticketing.ErrStateChanged)
	if got, _ := f.st.OrderStore.GetOrder(f.ctx, o.ID); got.Status != ticketing.OrderPaid || got.Version != 3 || len(got.Tickets) != 2 {
		t.Fatalf("paid order %+v", got)
	}
	settle := f.now.Add(time.Minute)
	o.Refund = &ticketing.Refund{ID: "rfd_1", Status: ticketing.RefundPending, Amount: o.TotalPrice, Currency: "RUB", CreatedAt: f.now, SettleAt: &settle}
	must(t, "start the refund", f.st.OrderStore.StartRefund(f.ctx, o))
	wantIs(t, "start it again from a stale version", f.st.OrderStore.StartRefund(f.ctx, &again), ticketing.ErrStateChanged)
	done := *o
	done.Status = ticketing.OrderRefunded
	must(t, "complete the refund", f.st.OrderStore.CompleteRefund(f.ctx, &done, f.outboxEvent(ticketing.EventOrderRefunded, &done)))
	wantIs(t, "complete it twice", f.st.OrderStore.CompleteRefund(f.ctx, o, f.outboxEvent(ticketing.EventOrderRefunded, o)), ticketing.ErrStateChanged)
	if got, _ := f.st.OrderStore.GetOrder(f.ctx, o.ID); got.Status != ticketing.OrderRefunded || got.Version != 5 {
		t.Fatalf("refunded order %+v", got)
	}
	if n := f.sold(t); n != 0 {
		t.Fatalf("sold %d after the refund, want 0", n)
	}
}

func testCancel(t *testing.T, f *fixture) {
	o := f.gaOrder(2)
	must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, f.event(t), f.now))
	c := *o
	c.Status, c.CancelReason = ticketing.OrderCancelled, "expired"
	must(t, "cancel overdue-only at the expiry", f.st.OrderStore.CancelOrder(f.ctx, &c, f.outboxEvent(ticketing.EventOrderCancelled, &c), o.ExpiresAt, true))
	wantIs(t, "cancel twice", f.st.OrderStore.CancelOrder(f.ctx, o, f.outboxEvent(ticketing.EventOrderCancelled, o), o.ExpiresAt, false), ticketing.ErrStateChanged)
	if n := f.sold(t); n != 0 {
		t.Fatalf("sold %d after the cancellation, want 0 (never negative)", n)
	}
	if got, _ := f.st.OrderStore.GetOrder(f.ctx, o.ID); got.Status != ticketing.OrderCancelled || got.CancelReason != "expired" {
		t.Fatalf("cancelled order %+v", got)
	}
}

// seatOrder is a pending order of the hold's seats, by reservation.
func (f *fixture) seatOrder(h *ticketing.Hold) *ticketing.Order {
	o := f.gaOrder(len(h.Seats))
	o.Lines = nil
	for _, s := range h.Seats {
		o.Lines = append(o.Lines, ticketing.OrderLine{TierID: SeatTier, TierName: "Seats", UnitPrice: s.Price, Quantity: 1, Seated: true,
			Seat: &ticketing.SeatRef{SeatID: s.SeatID, Label: s.Label, ZoneName: s.ZoneName}, ReservationID: s.ReservationID, HoldID: h.ID})
	}
	return o
}

func testSeatOrder(t *testing.T, f *fixture) {
	e := f.event(t)
	h := f.hold("seat_1", "seat_2")
	must(t, "hold", f.st.HoldStore.CreateHold(f.ctx, h, nil, nil, f.now))
	o := f.seatOrder(h)
	must(t, "order the held seats", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
	if s, _ := f.seat(t, "seat_2"); s.Status != ticketing.SeatReserved || !s.Until.Equal(o.ExpiresAt) {
		t.Fatalf("ordered seat %+v, want reserved until the order's expiry", s)
	}
	if ok, _ := f.st.HoldStore.ReleaseSeat(f.ctx, h, h.Seats[0], f.now); ok {
		t.Fatal("released a seat an order holds")
	}
	wantStock(t, "a used reservation", f.st.OrderStore.CreateOrder(f.ctx, f.seatOrder(h), e, f.now), 0, true)
	h2 := f.hold("seat_3")
	must(t, "hold seat_3", f.st.HoldStore.CreateHold(f.ctx, h2, nil, nil, f.now))
	wantStock(t, "a reservation past its hold", f.st.OrderStore.CreateOrder(f.ctx, f.seatOrder(h2), e, h2.ExpiresAt), 0, true)
	f.pay(t, o)
	if s, _ := f.seat(t, "seat_1"); s.Status != ticketing.SeatSold || !s.Taken(f.now.Add(1000*time.Hour)) {
		t.Fatalf("paid seat %+v, want sold", s)
	}
	wantStock(t, "hold a sold seat", f.st.HoldStore.CreateHold(f.ctx, f.hold("seat_1"), nil, nil, f.now.Add(time.Hour)), 0, true)
}

func testTicketNumbers(t *testing.T, f *fixture) {
	e := f.event(t)
	a, b := f.gaOrder(1), f.gaOrder(1)
	must(t, "create a", f.st.OrderStore.CreateOrder(f.ctx, a, e, f.now))
	must(t, "create b", f.st.OrderStore.CreateOrder(f.ctx, b, e, f.now))
	f.pay(t, a)
	n := *b
	n.Status, n.TicketNumber = ticketing.OrderPaid, a.Tickets[0].Number
	n.Tickets = []ticketing.Ticket{{Number: f.id("TIX-C"), Status: ticketing.TicketIssued}}
	wantIs(t, "a taken ticket number", f.st.OrderStore.ConfirmOrder(f.ctx, &n, f.outboxEvent(ticketing.EventOrderPaid, &n), f.now, false), ticketing.ErrTicketNumberTaken)
	if got, _ := f.st.OrderStore.GetOrder(f.ctx, b.ID); got.Status != ticketing.OrderPending {
		t.Fatalf("order with a refused number is %s, want pending", got.Status)
	}
	f.pay(t, b)
}

func testPromoUses(t *testing.T, f *fixture) {
	e := f.event(t)
	promoted := func() *ticketing.Order {
		o := f.gaOrder(1)
		o.Promo = &ticketing.AppliedPromo{Code: Promo, Type: ticketing.PromoPercent, Value: 10, Discount: 15000, Limited: true}
		return o
	}
	a := promoted()
	must(t, "first use", f.st.OrderStore.CreateOrder(f.ctx, a, e, f.now))
	wantIs(t, "second use of a code usable once", f.st.OrderStore.CreateOrder(f.ctx, promoted(), e, f.now), ticketing.ErrPromoExhausted)
	if n, err := f.promoUses(e); n != 1 || err != nil {
		t.Fatalf("uses %d, %v; want 1", n, err)
	}
	if n := f.sold(t); n != 1 {
		t.Fatalf("a refused order took stock: sold %d", n)
	}
	must(t, "cancel", f.st.OrderStore.CancelOrder(f.ctx, a, f.outboxEvent(ticketing.EventOrderCancelled, a), f.now, false))
	if n, _ := f.promoUses(e); n != 0 {
		t.Fatalf("uses %d after the cancellation, want 0", n)
	}
	must(t, "the code again", f.st.OrderStore.CreateOrder(f.ctx, promoted(), e, f.now))
}

func testClientCap(t *testing.T, f *fixture) {
	e := f.event(t)
	capped := func(qty int) *ticketing.Order {
		o := f.gaOrder(qty)
		o.ClientCap = &ticketing.ClientCap{Key: "org_conf#test#192.0.2.9#evt_conf", MaxOrders: 2, MaxUnits: 3}
		return o
	}
	a := capped(2)
	must(t, "first", f.st.OrderStore.CreateOrder(f.ctx, a, e, f.now))
	wantIs(t, "over the units", f.st.OrderStore.CreateOrder(f.ctx, capped(2), e, f.now), ticketing.ErrClientCap)
	must(t, "second", f.st.OrderStore.CreateOrder(f.ctx, capped(1), e, f.now))
	wantIs(t, "over the orders", f.st.OrderStore.CreateOrder(f.ctx, capped(0), e, f.now), ticketing.ErrClientCap)
	if ids, err := f.st.Limits.ClientCapOverdue(f.ctx, a.ClientCap.Key, f.now); len(ids) != 0 || err != nil {
		t.Fatalf("overdue before the expiry: %v, %v", ids, err)
	}
	ids, err := f.st.Limits.ClientCapOverdue(f.ctx, a.ClientCap.Key, a.ExpiresAt)
	if err != nil || len(ids) != 2 {
		t.Fatalf("overdue at the expiry: %v, %v; want both", ids, err)
	}
	must(t, "cancel", f.st.OrderStore.CancelOrder(f.ctx, a, f.outboxEvent(ticketing.EventOrderCancelled, a), f.now, false))
	must(t, "a place given back", f.st.OrderStore.CreateOrder(f.ctx, capped(2), e, f.now))
}

func testDueTimers(t *testing.T, f *fixture) {
	o := f.gaOrder(1)
	must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, f.event(t), f.now))
	due := func(at time.Time) []ticketing.Timer {
		t.Helper()
		ts, err := f.st.Due.DueTimers(f.ctx, at, 10)
		must(t, "due timers", err)
		return ts
	}
	if ts := due(f.now); len(ts) != 0 {
		t.Fatalf("due before the expiry: %+v", ts)
	}
	if ts := due(o.ExpiresAt); len(ts) != 1 || ts[0].Kind != ticketing.TimerOrderExpiry || ts[0].OrderID != o.ID || !ts[0].Due.Equal(o.ExpiresAt) {
		t.Fatalf("due at the expiry: %+v", ts)
	}
	f.pay(t, o)
	if ts := due(o.ExpiresAt); len(ts) != 0 {
		t.Fatalf("a paid order still owes %+v", ts)
	}
	settle := f.now.Add(time.Minute)
	o.Refund = &ticketing.Refund{ID: "rfd_2", Status: ticketing.RefundPending, Amount: o.TotalPrice, CreatedAt: f.now, SettleAt: &settle}
	must(t, "start the refund", f.st.OrderStore.StartRefund(f.ctx, o))
	if ts := due(settle); len(ts) != 1 || ts[0].Kind != ticketing.TimerRefundSettle {
		t.Fatalf("due at the settlement: %+v", ts)
	}
	o.Status = ticketing.OrderRefunded
	must(t, "complete", f.st.OrderStore.CompleteRefund(f.ctx, o, f.outboxEvent(ticketing.EventOrderRefunded, o)))
	if ts := due(settle); len(ts) != 0 {
		t.Fatalf("a refunded order still owes %+v", ts)
	}
}

func testBudgets(t *testing.T, f *fixture) {
	window := time.Minute
	start := f.now.Truncate(window)
	for i, want := range []bool{true, true, false} {
		ok, reset, err := f.st.Limits.AdmitClientRate(f.ctx, "c1", 2, window, start.Add(time.Second))
		if err != nil || ok != want || !reset.Equal(start.Add(window)) {
			t.Fatalf("request %d: %v, %v, %v; want %v reset at %v", i, ok, reset, err, want, start.Add(window))
		}
		_, ok, _, err = f.st.Limits.AdmitHoldIP(f.ctx, "ip1", 2, window, start.Add(time.Second))
		if err != nil || ok != want {
			t.Fatalf("hold request %d: %v, %v; want %v", i, ok, err, want)
		}
	}
	if ok, _, _ := f.st.Limits.AdmitClientRate(f.ctx, "c1", 2, window, start.Add(window)); !ok {
		t.Fatal("the next window is refused")
	}
	if _, ok, _, _ := f.st.Limits.AdmitHoldIP(f.ctx, "ip1", 2, window, start.Add(window)); !ok {
		t.Fatal("the next hold window is refused")
	}
}

func testListOrders(t *testing.T, f *fixture) {
	e := f.event(t)
	var ids []string
	for i := range 3 {
		o := f.gaOrder(1)
		o.CreatedAt = f.now.Add(time.Duration(i) * time.Second)
		must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
		ids = append(ids, o.ID)
	}
	q := ticketing.OrderQuery{OrganizerID: Org, Environment: ticketing.EnvTest, Limit: 2, Now: f.now}
	page, err := f.st.OrderStore.ListOrders(f.ctx, q)
	if err != nil || len(page.Orders) != 2 || !page.HasMore || page.Orders[0].ID != ids[2] || page.Orders[1].ID != ids[1] {
		t.Fatalf("first page %+v, %v; want %s, %s", page, err, ids[2], ids[1])
	}
	q.Cursor = page.NextCursor
	page, err = f.st.OrderStore.ListOrders(f.ctx, q)
	if err != nil || len(page.Orders) != 1 || page.HasMore || page.Orders[0].ID != ids[0] {
		t.Fatalf("second page %+v, %v; want %s", page, err, ids[0])
	}
	q = ticketing.OrderQuery{OrganizerID: Org, Environment: ticketing.EnvTest, Limit: 10, Status: ticketing.OrderCancelled, Now: f.now.Add(time.Hour)}
	if page, err = f.st.OrderStore.ListOrders(f.ctx, q); err != nil || len(page.Orders) != 3 {
		t.Fatalf("overdue pending orders listed as cancelled: %+v, %v", page, err)
	}
	q.Status, q.Now = ticketing.OrderPending, f.now
	if page, err = f.st.OrderStore.ListOrders(f.ctx, q); err != nil || len(page.Orders) != 3 {
		t.Fatalf("pending orders: %+v, %v", page, err)
	}
	q.OrganizerID = "org_other"
	if page, err = f.st.OrderStore.ListOrders(f.ctx, q); err != nil || len(page.Orders) != 0 {
		t.Fatalf("another organizer's listing: %+v, %v", page, err)
	}

	// Orders created at the same instant list by id, newest id first, and a
	// walk one by one meets each order once.
	for range 2 {
		o := f.gaOrder(1)
		o.CreatedAt = f.now.Add(2 * time.Second)
		must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
		ids = append(ids, o.ID)
	}
	want := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}
	var got []string
	q = ticketing.OrderQuery{OrganizerID: Org, Environment: ticketing.EnvTest, Limit: 1, Status: ticketing.OrderPending, Now: f.now}
	for range len(want) + 1 {
		page, err := f.st.OrderStore.ListOrders(f.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Orders {
			got = append(got, o.ID)
		}
		if !page.HasMore {
			break
		}
		q.Cursor = page.NextCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walk one by one: %v, want %v", got, want)
	}
}

// testClientCapHolds: a hold's seats count on its client's counter with the
// pending orders' units, move to the order that uses them (once), and come
// back when released and once the hold has expired (each hold once).
func testClientCapHolds(t *testing.T, f *fixture) {
	e := f.event(t)
	key := "org_conf#test#192.0.2.8#evt_conf"
	capOf := func() *ticketing.ClientCap { return &ticketing.ClientCap{Key: key, MaxOrders: 5, MaxUnits: 4} }
	h := f.hold("seat_1", "seat_2", "seat_3")
	h.ClientCap = capOf()
	must(t, "hold three", f.st.HoldStore.CreateHold(f.ctx, h, nil, nil, f.now))
	over := f.hold("seat_4", "seat_5")
	over.ClientCap = capOf()
	wantIs(t, "a hold past the units", f.st.HoldStore.CreateHold(f.ctx, over, nil, nil, f.now), ticketing.ErrClientCap)
	ga := func(qty int) *ticketing.Order {
		o := f.gaOrder(qty)
		o.ClientCap = capOf()
		return o
	}
	wantIs(t, "an order past the units", f.st.OrderStore.CreateOrder(f.ctx, ga(2), e, f.now), ticketing.ErrClientCap)
	// Ordering two of the held seats moves them: still 3.
	seated := f.seatOrder(h)
	seated.Lines = seated.Lines[:2]
	seated.Quantity = 2
	seated.ClientCap = capOf()
	seated.ClientCap.Holds = map[string]int{h.ID: 2}
	must(t, "order two held seats", f.st.OrderStore.CreateOrder(f.ctx, seated, e, f.now))
	must(t, "one more unit", f.st.OrderStore.CreateOrder(f.ctx, ga(1), e, f.now)) // 4
	wantIs(t, "full", f.st.OrderStore.CreateOrder(f.ctx, ga(1), e, f.now), ticketing.ErrClientCap)
	if ok, err := f.st.HoldStore.ReleaseSeat(f.ctx, h, h.Seats[2], f.now); !ok || err != nil {
		t.Fatalf("release the third seat: %v %v", ok, err)
	}
	must(t, "the released seat's unit", f.st.OrderStore.CreateOrder(f.ctx, ga(1), e, f.now)) // 4
	if n, err := f.st.Limits.ReleaseOverdueHolds(f.ctx, key, f.now); n != 0 || err != nil {
		t.Fatalf("live hold given back: %d %v", n, err)
	}
	h2 := f.hold("seat_4")
	h2.ClientCap = capOf()
	wantIs(t, "still full", f.st.HoldStore.CreateHold(f.ctx, h2, nil, nil, f.now), ticketing.ErrClientCap)
	must(t, "cancel an order", f.st.OrderStore.CancelOrder(f.ctx, seated, f.outboxEvent(ticketing.EventOrderCancelled, seated), f.now, false))
	must(t, "a hold in its place", f.st.HoldStore.CreateHold(f.ctx, h2, nil, nil, f.now)) // 2 + 1
	later := h2.ExpiresAt
	for i, want := range []int{2, 0} { // h (nothing left counted) and h2; then none
		if n, err := f.st.Limits.ReleaseOverdueHolds(f.ctx, key, later); n != want || err != nil {
			t.Fatalf("expired holds given back (call %d): %d %v, want %d", i, n, err, want)
		}
	}
	h3 := f.hold("seat_5")
	h3.ClientCap = capOf()
	h3.ExpiresAt = later.Add(15 * time.Minute)
	must(t, "a hold after the expiry", f.st.HoldStore.CreateHold(f.ctx, h3, nil, nil, later))                  // 2 + 1
	wantIs(t, "but not two more", f.st.OrderStore.CreateOrder(f.ctx, ga(2), e, later), ticketing.ErrClientCap) // the two pending orders still count
}
