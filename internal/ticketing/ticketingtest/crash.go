package ticketingtest

import (
	"context"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/payment"
	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
	"tix/internal/ticketing"
)

// RecoveryBound is the documented longest wait (docs/guide.md, idempotency) before a
// retry with the same Idempotency-Key completes an order creation whose
// invocation crashed: the lease a crashed invocation no longer renews.
const RecoveryBound = 5 * time.Second

// RunCrashRecovery kills a live order creation at each of its steps (a panic
// stands for the process dying: nothing after it runs) over stores made by
// newStore, with the simulated bank behind the live provider. In every case a
// retry with the same Idempotency-Key completes the same order within
// RecoveryBound (on the injected clock), with one order and one payment at
// the bank; a slow bank call that is still running is never taken over.
func RunCrashRecovery(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *crashFixture)
	}{
		{"CrashAfterTheOrderTransaction", testCrashAfterOrder},
		{"CrashAfterTheBankCall", testCrashAfterBank},
		{"CrashAfterTheIdempotencyRecord", testCrashAfterRecord},
		{"CrashAfterTheClaimOfARetry", testCrashAfterClaim},
		{"SlowBankCallIsNotTakenOver", testSlowBankCall},
		{"InvocationThatLostItsLeaseStopsWaitingOnTheBank", testLeaseTaken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newCrashFixture(t, newStore(t)))
		})
	}
}

// crashed is the panic that stands for a crash.
type crashed struct{ step string }

// crashStore crashes after a step of the store when armed (once).
type crashStore struct {
	Store
	armed atomic.Value // step name, "" when disarmed
}

const (
	stepOrder = "order transaction"
	stepClaim = "claim"
	stepBank  = "bank call"
)

func (s *crashStore) fire(step string) {
	if s.armed.CompareAndSwap(step, "") {
		panic(crashed{step})
	}
}

// crashOrders is the order store of a crashStore.
type crashOrders struct {
	ticketing.OrderStore
	s *crashStore
}

// crashIdempotency is the idempotency store of a crashStore.
type crashIdempotency struct {
	ticketing.IdempotencyStore
	s *crashStore
}

func (c *crashOrders) CreateOrderWithKey(ctx context.Context, o *ticketing.Order, e *ticketing.Event, rec *ticketing.Idempotency, now time.Time) error {
	err := c.OrderStore.CreateOrderWithKey(ctx, o, e, rec, now)
	if err == nil {
		c.s.fire(stepOrder)
	}
	return err
}

// ClaimIdempotency crashes after a claim (a new lease), never after a renewal.
func (c *crashIdempotency) ClaimIdempotency(ctx context.Context, rec *ticketing.Idempotency, oldLease string) error {
	err := c.IdempotencyStore.ClaimIdempotency(ctx, rec, oldLease)
	if err == nil && rec.Lease != oldLease {
		c.s.fire(stepClaim)
	}
	return err
}

// crashBank is the live provider that crashes after the bank call when armed,
// and holds the first call back until released when gated.
type crashBank struct {
	ticketing.PaymentProvider
	crash   atomic.Bool
	mu      sync.Mutex
	gate    chan struct{} // closed: the held call goes on
	entered chan struct{} // closed once the held call waits
	calls   atomic.Int32
}

func (b *crashBank) CreatePayment(ctx context.Context, r ticketing.PaymentRequest) (ticketing.Payment, error) {
	b.mu.Lock()
	gate, entered := b.gate, b.entered
	b.gate = nil
	b.mu.Unlock()
	if gate != nil {
		close(entered)
		select {
		case <-gate:
		case <-ctx.Done():
			return ticketing.Payment{}, ctx.Err()
		}
	}
	b.calls.Add(1)
	pay, err := b.PaymentProvider.CreatePayment(ctx, r)
	if err == nil && b.crash.CompareAndSwap(true, false) {
		panic(crashed{stepBank})
	}
	return pay, err
}

// hold makes the next call wait for release (or its context).
func (b *crashBank) hold() (entered <-chan struct{}, release func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gate, b.entered = make(chan struct{}), make(chan struct{})
	gate := b.gate
	return b.entered, func() { close(gate) }
}

type crashFixture struct {
	st    *crashStore
	sales *ticketing.Sales
	clk   *clock.Fixed
	sim   *tbanksim.Server
	bank  *crashBank
	c     ticketing.Caller
	ctx   context.Context
}

func newCrashFixture(t *testing.T, st Store) *crashFixture {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	ctx := context.Background()
	if err := st.Events.PutEvent(ctx, Event(now)); err != nil {
		t.Fatal(err)
	}
	sim := tbanksim.New(tbanksim.Options{})
	sim.AddTerminal("TixCrashDEMO", "crash-pw")
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	bank := &crashBank{PaymentProvider: &payment.Live{Client: &tbank.Client{BaseURL: srv.URL, TerminalKey: "TixCrashDEMO", Password: "crash-pw"}}}
	cs := &crashStore{Store: st}
	cs.armed.Store("")
	settings := ticketing.DefaultSalesSettings
	settings.TokenSecret = []byte("crash-test-secret-0123456789")
	clk := clock.NewFixed(now)
	stores := st.SalesStores
	stores.OrderStore = &crashOrders{OrderStore: st.OrderStore, s: cs}
	stores.Idempotency = &crashIdempotency{IdempotencyStore: st.Idempotency, s: cs}
	sales := ticketing.NewSales(stores, &ticketing.SalesDeps{Clock: clk, Settings: settings,
		Payments: func(context.Context, string, ticketing.Environment) (ticketing.PaymentProvider, error) {
			return bank, nil
		}})
	return &crashFixture{st: cs, sales: sales, clk: clk, sim: sim, bank: bank, ctx: ctx,
		c: ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: Org, Environment: ticketing.EnvLive}, KeyID: "key_crash"}}
}

func crashRequest() ticketing.OrderRequest {
	email, tier, qty := "buyer@example.com", GATier, 1
	return ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty}
}

// create sends POST /orders with key; a crash is reported as crashed.
func (f *crashFixture) create(key string) (res *ticketing.OrderResult, crash bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashed); !ok {
				panic(r)
			}
			crash = true
		}
	}()
	res, err = f.sales.Orders.CreateOrder(f.ctx, f.c, key, crashRequest())
	return res, false, err
}

// crash runs a create that must crash at step.
func (f *crashFixture) crash(t *testing.T, key, step string) {
	t.Helper()
	if step == stepBank {
		f.bank.crash.Store(true)
	} else {
		f.st.armed.Store(step)
	}
	if res, crash, err := f.create(key); !crash {
		t.Fatalf("create %s did not crash after the %s: %+v, %v", key, step, res, err)
	}
}

// wantPending asserts that a retry is still refused with code (the earlier
// invocation may be alive).
func (f *crashFixture) wantPending(t *testing.T, key string, code ticketing.Code) {
	t.Helper()
	res, crash, err := f.create(key)
	if crash || !ticketing.IsCode(err, code) {
		t.Fatalf("retry of %s at +%s: %+v, %v (crash %v); want %s", key, f.clk.Now().Sub(f.start(t, key)), res, err, crash, code)
	}
}

// start is when key's record was first written (the clock's start).
func (f *crashFixture) start(t *testing.T, key string) time.Time {
	t.Helper()
	rec, err := f.st.Idempotency.GetIdempotency(f.ctx, f.c.Tenant, ticketing.IdemOrder, key)
	if err != nil {
		return f.clk.Now()
	}
	return rec.CreatedAt
}

// wantRecovered retries key and asserts the whole outcome: the order bound to
// the key, with the one payment the bank has for it, and one ticket sold.
func (f *crashFixture) wantRecovered(t *testing.T, key string) *ticketing.Order {
	t.Helper()
	res, crash, err := f.create(key)
	if crash || err != nil {
		t.Fatalf("retry of %s: %v (crash %v), want the order", key, err, crash)
	}
	return f.wantOne(t, key, res)
}

func (f *crashFixture) wantOne(t *testing.T, key string, res *ticketing.OrderResult) *ticketing.Order {
	t.Helper()
	rec, err := f.st.Idempotency.GetIdempotency(f.ctx, f.c.Tenant, ticketing.IdemOrder, key)
	if err != nil {
		t.Fatal(err)
	}
	o := res.Order
	if o.ID != rec.ResourceID || o.Status != ticketing.OrderPending || o.Payment == nil || res.QRImage == "" {
		t.Fatalf("retry of %s answered order %s (%s, payment %+v), want the key's order %s pending with its QR", key, o.ID, o.Status, o.Payment, rec.ResourceID)
	}
	bank := f.sim.Payments(o.ID)
	if len(bank) != 1 || bank[0].ID != o.Payment.ID || bank[0].QR != o.Payment.Payload {
		t.Fatalf("bank payments of %s: %+v, want one: the order's %s", o.ID, bank, o.Payment.ID)
	}
	st, err := f.st.Catalog.GetStock(f.ctx, EventID, ticketing.EnvLive, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: GATier}]; n != 1 {
		t.Fatalf("%d tickets sold, want the one order's 1", n)
	}
	stored, err := f.st.OrderStore.GetOrder(f.ctx, o.ID)
	if err != nil || stored.Payment == nil || stored.Payment.ID != o.Payment.ID {
		t.Fatalf("stored order %+v, %v; want the payment %s", stored, err, o.Payment.ID)
	}
	return o
}

// after moves the clock to d after start.
func (f *crashFixture) after(start time.Time, d time.Duration) { f.clk.Set(start.Add(d)) }

func testCrashAfterOrder(t *testing.T, f *crashFixture) {
	start := f.clk.Now()
	f.crash(t, "k-order", stepOrder)
	if n := f.bank.calls.Load(); n != 0 {
		t.Fatalf("%d bank calls before the crash, want none", n)
	}
	f.wantPending(t, "k-order", ticketing.CodeOrderPending)
	f.after(start, RecoveryBound-time.Second)
	f.wantPending(t, "k-order", ticketing.CodeOrderPending)
	f.after(start, RecoveryBound)
	f.wantRecovered(t, "k-order")
}

func testCrashAfterBank(t *testing.T, f *crashFixture) {
	start := f.clk.Now()
	f.crash(t, "k-bank", stepBank)
	rec, err := f.st.Idempotency.GetIdempotency(f.ctx, f.c.Tenant, ticketing.IdemOrder, "k-bank")
	if err != nil {
		t.Fatal(err)
	}
	if bank := f.sim.Payments(rec.ResourceID); len(bank) != 1 {
		t.Fatalf("bank payments before the crash: %+v, want the one started", bank)
	}
	f.wantPending(t, "k-bank", ticketing.CodeOrderPending)
	f.after(start, RecoveryBound-time.Second)
	f.wantPending(t, "k-bank", ticketing.CodeOrderPending)
	f.after(start, RecoveryBound)
	f.wantRecovered(t, "k-bank") // CheckOrder finds the payment started: no second Init
}

// The key's record without its order: what an invocation leaves that wrote
// the record alone (a retry that claimed it and died; records of the former
// two-step create).
func testCrashAfterRecord(t *testing.T, f *crashFixture) {
	start := f.clk.Now()
	// The request's fingerprint: the record of the same request in the test
	// environment (its stock apart).
	live := f.c
	f.c.Environment = ticketing.EnvTest
	f.crash(t, "k-probe", stepOrder)
	probe, err := f.st.Idempotency.GetIdempotency(f.ctx, f.c.Tenant, ticketing.IdemOrder, "k-probe")
	f.c = live
	if err != nil {
		t.Fatal(err)
	}
	rec := &ticketing.Idempotency{Tenant: f.c.Tenant, Scope: ticketing.IdemOrder, Key: "k-record", RequestHash: probe.RequestHash,
		ResourceID: "ord_CrashedRecord00000", Lease: "crashed", LeaseUntil: start.Add(f.sales.Deps.Settings.LeaseTTL), CreatedAt: start}
	if _, err := f.st.Idempotency.BeginIdempotency(f.ctx, rec, start); err != nil {
		t.Fatal(err)
	}
	f.wantPending(t, "k-record", ticketing.CodeConflict)
	f.after(start, RecoveryBound)
	if o := f.wantRecovered(t, "k-record"); o.ID != rec.ResourceID {
		t.Fatalf("recovered %s, want the bound id %s", o.ID, rec.ResourceID)
	}
}

// A retry that takes over a crashed create and crashes right after its claim
// holds the key for one more lease at most.
func testCrashAfterClaim(t *testing.T, f *crashFixture) {
	start := f.clk.Now()
	f.crash(t, "k-claim", stepOrder)
	f.after(start, RecoveryBound)
	f.crash(t, "k-claim", stepClaim)
	f.wantPending(t, "k-claim", ticketing.CodeOrderPending)
	f.after(start, 2*RecoveryBound)
	f.wantRecovered(t, "k-claim")
}

// A bank call slower than the lease keeps the key: its invocation renews the
// lease while it waits, so retries get 409 order_pending however long it
// takes, and no retry calls the bank beside it.
func testSlowBankCall(t *testing.T, f *crashFixture) {
	f.sales.Deps.Settings.LeaseTTL = 2 * time.Second // renewed every 667 ms of real time
	entered, release := f.bank.hold()
	type result struct {
		res *ticketing.OrderResult
		err error
	}
	first := make(chan result, 1)
	go func() {
		res, _, err := f.create("k-slow")
		first <- result{res, err}
	}()
	<-entered
	for range 5 {
		f.clk.Advance(f.sales.Deps.Settings.LeaseTTL) // past the lease it held before
		f.waitRenewed(t, "k-slow")
		f.wantPending(t, "k-slow", ticketing.CodeOrderPending)
	}
	if n := f.bank.calls.Load(); n != 0 {
		t.Fatalf("%d bank calls beside the held one, want none", n)
	}
	release()
	r := <-first
	if r.err != nil {
		t.Fatalf("the slow create: %v", r.err)
	}
	f.wantOne(t, "k-slow", r.res)
	f.wantRecovered(t, "k-slow") // a retry now replays the order
}

// waitRenewed waits (real time) until key's lease runs past the clock's now.
func (f *crashFixture) waitRenewed(t *testing.T, key string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rec, err := f.st.Idempotency.GetIdempotency(f.ctx, f.c.Tenant, ticketing.IdemOrder, key)
		if err == nil && rec.LeaseUntil.After(f.clk.Now()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease of %s was not renewed past %s: %+v, %v", key, f.clk.Now(), rec, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An invocation whose lease another one took over stops waiting on the bank
// and leaves the order to it.
func testLeaseTaken(t *testing.T, f *crashFixture) {
	f.sales.Deps.Settings.LeaseTTL = 2 * time.Second
	entered, release := f.bank.hold()
	defer release()
	type result struct {
		res *ticketing.OrderResult
		err error
	}
	first := make(chan result, 1)
	go func() {
		res, _, err := f.create("k-taken")
		first <- result{res, err}
	}()
	<-entered
	rec, err := f.st.Idempotency.GetIdempotency(f.ctx, f.c.Tenant, ticketing.IdemOrder, "k-taken")
	if err != nil {
		t.Fatal(err)
	}
	other := *rec
	other.Lease, other.LeaseUntil = "other-invocation", f.clk.Now().Add(time.Minute)
	if err := f.st.Idempotency.ClaimIdempotency(f.ctx, &other, rec.Lease); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-first:
		if !ticketing.IsCode(r.err, ticketing.CodeOrderPending) {
			t.Fatalf("the invocation that lost its lease answered %+v, %v; want order_pending", r.res, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the invocation that lost its lease still waits on the bank")
	}
	if n := f.bank.calls.Load(); n != 0 || len(f.sim.Payments(rec.ResourceID)) != 0 {
		t.Fatalf("%d bank calls, payments %+v; want none", n, f.sim.Payments(rec.ResourceID))
	}
}
