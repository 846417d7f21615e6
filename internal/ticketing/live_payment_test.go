package ticketing_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"tix/internal/payment"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// acquirer is an in-memory live acquirer: payments by id with a status the
// test sets, and the refund (Cancel) requests it was sent.
type acquirer struct {
	mu       sync.Mutex
	status   map[string]ticketing.PaymentStatus
	refunds  []ticketing.RefundRequest
	refundTo ticketing.PaymentStatus // what a refund request moves a paid payment to
	down     bool                    // refund requests fail
}

func (a *acquirer) CreatePayment(_ context.Context, r ticketing.PaymentRequest) (ticketing.Payment, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := "pay_" + r.OrderID
	if _, ok := a.status[id]; !ok {
		a.status[id] = ticketing.PaymentWaiting
	}
	return ticketing.Payment{Provider: "sbp", ID: id, Payload: "https://qr.nspk.ru/X", DeepLink: "https://qr.nspk.ru/X", ExpiresAt: r.ExpiresAt}, nil
}

func (a *acquirer) Refund(_ context.Context, r ticketing.RefundRequest) (ticketing.RefundAccepted, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refunds = append(a.refunds, r)
	if a.down {
		return ticketing.RefundAccepted{}, errors.New("acquirer down")
	}
	switch a.status[r.PaymentID] {
	case ticketing.PaymentPaid:
		a.status[r.PaymentID] = a.refundTo
	case ticketing.PaymentWaiting:
		a.status[r.PaymentID] = ticketing.PaymentFailed // voided
	}
	return ticketing.RefundAccepted{}, nil
}

func (a *acquirer) QRImage(p string) (string, error) { return payment.QRImage(p) }

func (a *acquirer) PaymentState(_ context.Context, id string) (ticketing.PaymentUpdate, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return ticketing.PaymentUpdate{PaymentID: id, Amount: 150000, Status: a.status[id]}, nil
}

func (a *acquirer) set(id string, st ticketing.PaymentStatus) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status[id] = st
}

func (a *acquirer) refundCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.refunds)
}

// liveDomain is the Sales service over the in-memory store with live orders
// paid through the in-memory acquirer.
func liveDomain(t *testing.T) (*domain, *acquirer) {
	d := newDomain(t)
	acq := &acquirer{status: map[string]ticketing.PaymentStatus{}, refundTo: ticketing.PaymentRefunding}
	d.sales.Deps.Payments = func(context.Context, string, ticketing.Environment) (ticketing.PaymentProvider, error) {
		return acq, nil
	}
	d.c.Environment = ticketing.EnvLive
	return d, acq
}

func (d *domain) update(t *testing.T, o *ticketing.Order, st ticketing.PaymentStatus, amount int64) {
	t.Helper()
	u := ticketing.PaymentUpdate{OrganizerID: o.OrganizerID, OrderID: o.ID, PaymentID: o.Payment.ID, Amount: amount, Status: st}
	if err := d.sales.Payments.ApplyPaymentUpdate(context.Background(), u); err != nil {
		t.Fatalf("apply %s: %v", st, err)
	}
}

func (d *domain) get(t *testing.T, id string) *ticketing.Order {
	t.Helper()
	o, err := d.st.Orders.GetOrder(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// liveSold is how many tickets of the GA tier live orders hold.
func (d *domain) liveSold(t *testing.T) int {
	t.Helper()
	st, err := d.st.Catalog.GetStock(context.Background(), ticketingtest.EventID, ticketing.EnvLive, "")
	if err != nil {
		t.Fatal(err)
	}
	return st.Sold[ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: ticketingtest.GATier}]
}

func (d *domain) paidEvents(id string) int {
	n := 0
	for _, ev := range d.st.Outbox.OrderEvents() {
		if ev.Type == ticketing.EventOrderPaid && ev.Order.ID == id {
			n++
		}
	}
	return n
}

// A confirmed payment pays the order once: a duplicate, a stale waiting
// state and another organizer's terminal change nothing.
func TestApplyPaymentUpdate_PaysOnceAndIgnoresStaleAndForeignUpdates(t *testing.T) {
	d, _ := liveDomain(t)
	o := d.order(t, "live-1", gaOrder(1))
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice)
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice)
	d.update(t, o, ticketing.PaymentWaiting, o.TotalPrice)
	foreign := ticketing.PaymentUpdate{OrganizerID: "org_other", OrderID: o.ID, PaymentID: o.Payment.ID, Status: ticketing.PaymentFailed}
	if err := d.sales.Payments.ApplyPaymentUpdate(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	got := d.get(t, o.ID)
	if got.Status != ticketing.OrderPaid || len(got.Tickets) != 1 || d.paidEvents(o.ID) != 1 {
		t.Fatalf("order %s with %d tickets and %d order.paid, want paid once with 1 ticket", got.Status, len(got.Tickets), d.paidEvents(o.ID))
	}
}

// Money for a payment the order does not know, or of another amount, is
// returned at once, whole, and recorded once; the order does not move. The
// same news again asks for nothing more (the stray check follows it up).
func TestApplyPaymentUpdate_ReturnsMoneyThatDoesNotMatchTheOrder(t *testing.T) {
	d, acq := liveDomain(t)
	o := d.order(t, "live-2", gaOrder(1))
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice-1)
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice-1)
	if got := d.get(t, o.ID); got.Status != ticketing.OrderPending || acq.refundCount() != 1 || acq.refunds[0].Amount != o.TotalPrice-1 {
		t.Fatalf("order %s, refunds %+v: want pending and the odd amount returned once", got.Status, acq.refunds)
	}
	strays, err := d.st.Strays.OrderStrays(context.Background(), o.ID)
	if err != nil || len(strays) != 1 || strays[0].Amount != o.TotalPrice-1 || strays[0].Status != ticketing.StrayRefundPending {
		t.Fatalf("stray records %+v %v: want one, refund pending, for the amount reported", strays, err)
	}
}

// The payment that backs a paid order is never refunded by the stray path,
// whatever amount is reported for it.
func TestApplyPaymentUpdate_NeverRefundsAPaidOrdersOwnPaymentAsStray(t *testing.T) {
	d, acq := liveDomain(t)
	o := d.order(t, "live-own", gaOrder(1))
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice)
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice/10)
	d.update(t, o, ticketing.PaymentPaid, 0)
	if got := d.get(t, o.ID); got.Status != ticketing.OrderPaid || acq.refundCount() != 0 {
		t.Fatalf("order %s, refunds %+v: want paid, nothing refunded", got.Status, acq.refunds)
	}
}

// A late payment reinstates the cancelled order when its stock is still
// there; when the stock went to others, it is refunded and the order says so
// until the acquirer reports the money back.
func TestLatePayment_ReinstatedOrRefunded(t *testing.T) {
	d, acq := liveDomain(t)
	o := d.order(t, "late-ok", gaOrder(2))
	d.clk.Set(o.ExpiresAt.Add(time.Second))
	acq.set(o.Payment.ID, ticketing.PaymentWaiting)
	if cur, err := d.sales.Orders.Order(context.Background(), d.c.Tenant, o.ID); err != nil || cur.Status != ticketing.OrderCancelled {
		t.Fatalf("read past expiry: %v %v, want cancelled", cur, err)
	}
	acq.set(o.Payment.ID, ticketing.PaymentPaid)
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice)
	got := d.get(t, o.ID)
	if got.Status != ticketing.OrderPaid || got.LatePayment == nil || got.LatePayment.Outcome != ticketing.LateReinstated || d.liveSold(t) != 2 {
		t.Fatalf("order %s late %+v sold %d: want reinstated, 2 sold", got.Status, got.LatePayment, d.liveSold(t))
	}

	gone := d.order(t, "late-gone", gaOrder(2))
	d.clk.Set(gone.ExpiresAt.Add(time.Second))
	if _, err := d.sales.Orders.Order(context.Background(), d.c.Tenant, gone.ID); err != nil {
		t.Fatal(err)
	}
	d.order(t, "late-taker", gaOrder(ticketingtest.GACap-2)) // the rest of the tier
	acq.set(gone.Payment.ID, ticketing.PaymentPaid)
	d.update(t, gone, ticketing.PaymentPaid, gone.TotalPrice)
	got = d.get(t, gone.ID)
	if got.Status != ticketing.OrderCancelled || got.LatePayment.Outcome != ticketing.LateRefundPending || acq.refundCount() != 1 {
		t.Fatalf("order %s late %+v refunds %d: want cancelled, refund pending, one refund asked", got.Status, got.LatePayment, acq.refundCount())
	}
	if r := acq.refunds[0]; r.Amount != gone.TotalPrice || len(r.Items) == 0 || r.Email != "buyer@example.com" {
		t.Errorf("refund request %+v: want the full amount with its receipt", r)
	}
	if d.liveSold(t) != ticketingtest.GACap {
		t.Errorf("sold %d, want %d: the refunded late payment takes no stock", d.liveSold(t), ticketingtest.GACap)
	}
	d.update(t, gone, ticketing.PaymentPaid, gone.TotalPrice) // the notification again
	if acq.refundCount() != 2 {
		t.Errorf("a repeated CONFIRMED must ask for the refund again (idempotent at the acquirer), got %d requests", acq.refundCount())
	}
	d.update(t, gone, ticketing.PaymentRefunded, gone.TotalPrice)
	if got := d.get(t, gone.ID); got.LatePayment.Outcome != ticketing.LateRefunded || got.LatePayment.RefundedAt == nil {
		t.Fatalf("late payment %+v, want refunded", got.LatePayment)
	}
	for _, tm := range mustDue(t, d, d.clk.Now().Add(24*time.Hour)) {
		if tm.OrderID == gone.ID {
			t.Errorf("timer %+v still owed after the late payment was refunded", tm)
		}
	}
}

// A stale CONFIRMED for a payment voided since changes nothing.
func TestLatePayment_StaleConfirmationOfAVoidedPaymentChangesNothing(t *testing.T) {
	d, acq := liveDomain(t)
	o := d.order(t, "late-stale", gaOrder(1))
	d.clk.Set(o.ExpiresAt.Add(time.Second))
	if _, err := d.sales.Orders.Order(context.Background(), d.c.Tenant, o.ID); err != nil {
		t.Fatal(err)
	}
	acq.set(o.Payment.ID, ticketing.PaymentFailed)
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice)
	if got := d.get(t, o.ID); got.Status != ticketing.OrderCancelled || got.LatePayment != nil || acq.refundCount() != 0 {
		t.Fatalf("order %s late %+v refunds %d: want untouched", got.Status, got.LatePayment, acq.refundCount())
	}
}

// The payment check after the grace period voids a payment still open, then
// (next check) finds it cancelled and owes nothing more.
func TestReconcile_PaymentCheckVoidsAnOpenPaymentThenStops(t *testing.T) {
	d, acq := liveDomain(t)
	o := d.order(t, "check-void", gaOrder(1))
	d.clk.Set(o.ExpiresAt.Add(time.Second))
	if _, err := d.sales.Orders.Order(context.Background(), d.c.Tenant, o.ID); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var voidedAt time.Time
	for round := 0; round < 2; round++ {
		d.clk.Set(d.clk.Now().Add(d.sales.Deps.Settings.PaymentCheckGrace + d.sales.Deps.Settings.SweepGrace))
		n, err := d.sales.Orders.SweepDue(ctx, 10)
		if err != nil || n != 1 {
			t.Fatalf("round %d: swept %d, %v; want the one payment check", round, n, err)
		}
		if round == 0 { // voided: checked again a grace period later
			voidedAt = d.clk.Now()
			next := voidedAt.Add(d.sales.Deps.Settings.PaymentCheckGrace)
			got := d.get(t, o.ID)
			if got.PaymentCheckAt == nil || !got.PaymentCheckAt.Equal(next) || d.queue.lastScheduled(o.ID) != (ticketing.Timer{Kind: ticketing.TimerPaymentCheck, OrderID: o.ID, Due: next}) {
				t.Fatalf("after the void: check at %v, last timer %+v; want the next check at %s", got.PaymentCheckAt, d.queue.lastScheduled(o.ID), next)
			}
		}
	}
	if acq.refundCount() != 1 || acq.refunds[0].PaymentID != o.Payment.ID {
		t.Fatalf("refund (void) requests %+v, want one for the open payment", acq.refunds)
	}
	if voided := voidedAt; voided.IsZero() {
		t.Fatal("no round voided the payment")
	}
	d.clk.Set(d.clk.Now().Add(24 * time.Hour))
	if due, _ := d.st.Due.DueTimers(ctx, d.clk.Now(), 10); len(due) != 0 {
		t.Fatalf("due timers %+v after the payment failed, want none", due)
	}
}

// The refund check asks again while the money is on its way, asks for the
// refund again if the acquirer never started it, and completes the refund
// once the acquirer reports it, when the notification was lost.
func TestReconcile_RefundCheckUntilSettled(t *testing.T) {
	d, acq := liveDomain(t)
	acq.refundTo = ticketing.PaymentPaid // the first refund request is lost at the acquirer
	o := d.order(t, "check-refund", gaOrder(1))
	d.update(t, o, ticketing.PaymentPaid, o.TotalPrice)
	acq.set(o.Payment.ID, ticketing.PaymentPaid)
	ctx := context.Background()
	if _, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, o.ID, nil); err != nil {
		t.Fatal(err)
	}
	acq.refundTo = ticketing.PaymentRefunding
	d.clk.Set(d.clk.Now().Add(d.sales.Deps.Settings.RefundCheckEvery + d.sales.Deps.Settings.SweepGrace))
	if n, err := d.sales.Orders.SweepDue(ctx, 10); err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	if acq.refundCount() != 2 || d.get(t, o.ID).Status != ticketing.OrderPaid {
		t.Fatalf("refund requests %d, want 2 (asked again), order still paid", acq.refundCount())
	}
	next := d.clk.Now().Add(d.sales.Deps.Settings.RefundCheckEvery)
	if r := d.get(t, o.ID).Refund; r.CheckAt == nil || !r.CheckAt.Equal(next) ||
		d.queue.lastScheduled(o.ID) != (ticketing.Timer{Kind: ticketing.TimerRefundCheck, OrderID: o.ID, Due: next}) {
		t.Fatalf("refund checked again at %v, last timer %+v; want %s", r.CheckAt, d.queue.lastScheduled(o.ID), next)
	}
	acq.set(o.Payment.ID, ticketing.PaymentRefunded)
	d.clk.Set(d.clk.Now().Add(d.sales.Deps.Settings.RefundCheckEvery + d.sales.Deps.Settings.SweepGrace))
	if n, err := d.sales.Orders.SweepDue(ctx, 10); err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	if got := d.get(t, o.ID); got.Status != ticketing.OrderRefunded || got.Refund.Status != ticketing.RefundCompleted {
		t.Fatalf("order %s refund %+v, want refunded and completed", got.Status, got.Refund)
	}
	if due, _ := d.st.Due.DueTimers(ctx, d.clk.Now().Add(time.Hour), 10); len(due) != 0 {
		t.Fatalf("due timers %+v after the refund settled, want none", due)
	}
}

// Receipt items add up to the total paid, discount included, each item's
// amount its price times its quantity.
func TestReceiptItems_AddUpToTheTotal(t *testing.T) {
	o := &ticketing.Order{EventTitle: "Show", BasePrice: 3*33333 + 2*50000, TotalPrice: 3*33333 + 2*50000 - 1001,
		Lines: []ticketing.OrderLine{{TierName: "A", UnitPrice: 33333, Quantity: 3}, {TierName: "B", UnitPrice: 50000, Quantity: 2}}}
	var sum int64
	for _, it := range o.ReceiptItems() {
		if it.UnitPrice < 0 || it.Quantity <= 0 {
			t.Fatalf("item %+v", it)
		}
		sum += it.UnitPrice * int64(it.Quantity)
	}
	if sum != o.TotalPrice {
		t.Fatalf("items add up to %d, want %d: %+v", sum, o.TotalPrice, o.ReceiptItems())
	}
}

func mustDue(t *testing.T, d *domain, at time.Time) []ticketing.Timer {
	t.Helper()
	due, err := d.st.Due.DueTimers(context.Background(), at, 100)
	if err != nil {
		t.Fatal(err)
	}
	return due
}

// A refund made at the bank, outside tix: in full, the order follows it
// (refunded, stock back, order.refunded); in part, the order stays paid,
// flagged, its owners alerted once, and tix refuses to refund the rest.
func TestApplyPaymentUpdate_FollowsRefundsMadeAtTheBank(t *testing.T) {
	d, _ := liveDomain(t)
	alerts := &alertLog{}
	d.sales.Deps.Alerts = alerts
	full := d.order(t, "outside-full", gaOrder(2))
	d.update(t, full, ticketing.PaymentPaid, full.TotalPrice)
	d.update(t, full, ticketing.PaymentRefunded, full.TotalPrice)
	d.update(t, full, ticketing.PaymentRefunded, full.TotalPrice)
	got := d.get(t, full.ID)
	if got.Status != ticketing.OrderRefunded || got.Refund == nil || got.Refund.Status != ticketing.RefundCompleted ||
		got.OutsideRefund == nil || got.OutsideRefund.Kind != ticketing.OutsideRefundFull || d.liveSold(t) != 0 {
		t.Fatalf("order %s refund %+v outside %+v sold %d: want refunded in full, stock back", got.Status, got.Refund, got.OutsideRefund, d.liveSold(t))
	}
	part := d.order(t, "outside-part", gaOrder(1))
	d.update(t, part, ticketing.PaymentPaid, part.TotalPrice)
	d.update(t, part, ticketing.PaymentPartlyRefunded, part.TotalPrice)
	d.update(t, part, ticketing.PaymentPartlyRefunded, part.TotalPrice)
	got = d.get(t, part.ID)
	if got.Status != ticketing.OrderPaid || got.OutsideRefund == nil || got.OutsideRefund.Kind != ticketing.OutsideRefundPartial || alerts.n != 1 {
		t.Fatalf("order %s outside %+v alerts %d: want paid, flagged partial, one alert", got.Status, got.OutsideRefund, alerts.n)
	}
	if _, err := d.sales.Orders.RefundOrder(context.Background(), d.c.Tenant, part.ID, nil); !ticketing.IsCode(err, ticketing.CodeConflict) {
		t.Errorf("refund of a partly refunded order: %v, want conflict", err)
	}
}

type alertLog struct{ n int }

func (a *alertLog) PartlyRefundedOutside(context.Context, string, string, string, time.Time) error {
	a.n++
	return nil
}

// Money confirmed for a pending order whose payment its creation has not
// recorded yet may be that payment: it is looked at again later (an error,
// so the notification is retried), never refunded as a stray.
func TestApplyPaymentUpdate_WaitsForTheOrdersPaymentToBeRecorded(t *testing.T) {
	d, acq := liveDomain(t)
	ctx := context.Background()
	o := d.order(t, "unrecorded", gaOrder(1))
	n := *o
	n.Payment = nil // as between the order's write and its payment's
	if err := d.st.Orders.SaveOrder(ctx, &n, ticketing.OrderPending, nil, nil); err != nil {
		t.Fatal(err)
	}
	u := ticketing.PaymentUpdate{OrganizerID: o.OrganizerID, OrderID: o.ID, PaymentID: o.Payment.ID, Amount: o.TotalPrice, Status: ticketing.PaymentPaid}
	if err := d.sales.Payments.ApplyPaymentUpdate(ctx, u); err == nil {
		t.Fatal("a confirmation before the payment is recorded was taken as applied")
	}
	strays, err := d.st.Strays.OrderStrays(ctx, o.ID)
	if got := d.get(t, o.ID); got.Status != ticketing.OrderPending || acq.refundCount() != 0 || err != nil || len(strays) != 0 {
		t.Fatalf("order %s, refunds %d, strays %+v %v: want pending, nothing refunded or recorded", got.Status, acq.refundCount(), strays, err)
	}
}
