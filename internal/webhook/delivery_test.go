package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/clock"
	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// These tests run the whole delivery path against DynamoDB Local, fauxqs and
// a real HTTP receiver on loopback: orders change through the sales service,
// the deliveries queue is consumed as the local runner does, and the receiver
// checks what arrives.

// received is one POST the receiver got.
type received struct {
	Header http.Header
	Body   []byte
	Env    struct {
		ID         string          `json:"id"`
		Type       string          `json:"type"`
		APIVersion string          `json:"api_version"`
		CreatedAt  time.Time       `json:"created_at"`
		Livemode   bool            `json:"livemode"`
		Data       json.RawMessage `json:"data"`
	}
	Order struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		IsPaid bool   `json:"is_paid"`
	}
}

// receiver is a webhook receiver: it answers endpoint.verify with the nonce
// and everything else with status(n), n counting order events from 1.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	status func(n int) int
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{status: func(int) int { return http.StatusOK }}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var g received
		g.Header, g.Body = r.Header.Clone(), body
		if err := json.Unmarshal(body, &g.Env); err != nil {
			http.Error(w, "not an envelope", http.StatusBadRequest)
			return
		}
		if g.Env.Type == webhook.TypeEndpointVerify {
			var d struct{ Nonce string }
			_ = json.Unmarshal(g.Env.Data, &d)
			_ = json.NewEncoder(w).Encode(map[string]string{"nonce": d.Nonce})
			return
		}
		var od struct {
			Order json.RawMessage `json:"order"`
		}
		_ = json.Unmarshal(g.Env.Data, &od)
		_ = json.Unmarshal(od.Order, &g.Order)
		rc.mu.Lock()
		rc.got = append(rc.got, g)
		n := len(rc.got)
		status := rc.status
		rc.mu.Unlock()
		w.WriteHeader(status(n))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) events() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// harness is the app of one test with its consumers running.
type harness struct {
	t      *testing.T
	a      *app.App
	clk    *clock.Shifted // every part of a's clock
	ctx    context.Context
	tenant ticketing.Tenant
}

// newHarness wires the app; consume false leaves the deliveries queue alone
// (the test drives messages itself).
func newHarness(t *testing.T, consume bool) *harness {
	t.Helper()
	clk := &clock.Shifted{}
	env := lambdaenv.NewWithClock(t, clk)
	a := env.App
	app.AllowLoopbackWebhooks(a.Webhooks, a.Config) // the receivers are on loopback
	a.Webhooks.Settings.Schedule = []time.Duration{0, time.Second, time.Second, time.Second, time.Second}
	a.Webhooks.Settings.SweepGrace = 2 * time.Second
	a.Webhooks.Settings.RedeliverDelay = 0
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	if consume {
		wg.Go(func() {
			_ = a.Queue.Consume(ctx, queue.DeliveriesQueue, func(ctx context.Context, m queue.Message) error {
				return a.HandleDeliveryMessage(ctx, m.Body)
			})
		})
	}
	wg.Go(func() {
		_ = a.Queue.Consume(ctx, queue.TimersQueue, func(ctx context.Context, m queue.Message) error {
			return a.HandleTimerMessage(ctx, m.Body)
		})
	})
	return &harness{t: t, a: a, clk: clk, ctx: ctx, tenant: ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}}
}

// endpoint registers (and, when verify, verifies) an endpoint for rc.
func (h *harness) endpoint(rc *receiver, verify bool, events ...string) (*webhook.Endpoint, string) {
	h.t.Helper()
	ep, secret, err := h.a.Webhooks.CreateEndpoint(h.ctx, webhook.NewEndpoint{
		OrganizerID: h.tenant.OrganizerID, Environment: h.tenant.Environment, URL: rc.srv.URL + "/hooks", EnabledEvents: events,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if verify {
		var res webhook.SendResult
		ep, res, err = h.a.Webhooks.VerifyEndpoint(h.ctx, ep.ID)
		if err != nil || !res.OK || !ep.Verified {
			h.t.Fatalf("verify: %+v %v", res, err)
		}
	}
	return ep, secret
}

// order creates a pending one-ticket test order.
func (h *harness) order(sales *ticketing.Sales) *ticketing.Order {
	h.t.Helper()
	tier, qty, email := "tier_l", 1, "buyer@example.com"
	res, err := sales.CreateOrder(h.ctx, ticketing.Caller{Tenant: h.tenant, KeyID: "key_l"}, webhook.NewSecret(), ticketing.OrderRequest{
		Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return res.Order
}

// settled waits until the deliveries queue is empty: every fan-out and attempt
// sent so far has been handled, so no POST is still to come (the harness runs
// no sweep).
func (h *harness) settled() {
	h.t.Helper()
	testenv.WaitFor(h.t, 10*time.Second, "the deliveries queue to empty", func() bool {
		n, err := h.a.Queue.Depth(h.ctx, queue.DeliveriesQueue)
		if err != nil {
			h.t.Fatal(err)
		}
		return n == 0
	})
}

func (h *harness) simulate(id, outcome string) {
	h.t.Helper()
	if _, err := h.a.Sales.Simulate(h.ctx, h.tenant, id, outcome); err != nil {
		h.t.Fatal(err)
	}
}

// eventFor waits for the receiver's event of type typ for order id.
func eventFor(t *testing.T, rc *receiver, typ, id string) received {
	t.Helper()
	var got received
	testenv.WaitFor(t, 10*time.Second, typ+" of "+id, func() bool {
		for _, e := range rc.events() {
			if e.Env.Type == typ && e.Order.ID == id {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

func checkSigned(t *testing.T, e received, secrets ...string) {
	t.Helper()
	header := e.Header.Get(webhook.SignatureHeader)
	for _, s := range secrets {
		if err := webhook.Verify(header, e.Body, s, time.Now(), webhook.Tolerance); err != nil {
			t.Errorf("%s of %s: signature %q does not verify with %s: %v", e.Env.Type, e.Order.ID, header, s[:10], err)
		}
	}
	if !strings.HasPrefix(e.Env.ID, "evt_") || e.Env.APIVersion != "2026-06-01" || e.Env.Livemode || e.Env.CreatedAt.IsZero() {
		t.Errorf("envelope: %+v", e.Env)
	}
	if ua := e.Header.Get("User-Agent"); !strings.Contains(ua, "tix") {
		t.Errorf("User-Agent %q does not name tix", ua)
	}
	if strings.Contains(string(e.Body), "buyer@example.com") || strings.Contains(string(e.Body), "buyer") {
		t.Errorf("buyer data in a webhook: %s", e.Body)
	}
}

func (h *harness) delivery(id string) *webhook.Delivery {
	h.t.Helper()
	d, err := h.a.Store.GetDelivery(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return d
}

// Paid, cancelled (by simulate and by expiry) and refunded orders each reach
// the receiver, signed and verifiable, as state without PII.
func TestOrderEventsReachTheReceiverSigned(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	rc := newReceiver(t)
	ep, secret := h.endpoint(rc, true)

	cfg := h.a.Config
	cfg.RefundDelay, cfg.TestOrderTTL = time.Second, time.Second
	sales := app.NewSales(cfg, h.a.Store, h.a.Timers, nil)
	sales.Events = h.a.Webhooks

	paid := h.order(h.a.Sales)
	h.simulate(paid.ID, ticketing.OutcomePaid)
	e := eventFor(t, rc, ticketing.EventOrderPaid, paid.ID)
	checkSigned(t, e, secret)
	if e.Order.Status != "paid" || !e.Order.IsPaid {
		t.Errorf("order.paid carries %+v", e.Order)
	}

	cancelled := h.order(h.a.Sales)
	h.simulate(cancelled.ID, ticketing.OutcomeCancelled)
	checkSigned(t, eventFor(t, rc, ticketing.EventOrderCancelled, cancelled.ID), secret)

	expiring := h.order(sales) // expires after 1 s through the timers queue
	e = eventFor(t, rc, ticketing.EventOrderCancelled, expiring.ID)
	checkSigned(t, e, secret)
	if e.Order.Status != "cancelled" {
		t.Errorf("expiry carries %+v", e.Order)
	}

	if _, err := sales.RefundOrder(h.ctx, h.tenant, paid.ID, nil); err != nil {
		t.Fatal(err)
	}
	e = eventFor(t, rc, ticketing.EventOrderRefunded, paid.ID) // settles after 1 s through the timers queue
	checkSigned(t, e, secret)
	if e.Order.Status != "refunded" {
		t.Errorf("order.refunded carries %+v", e.Order)
	}

	id := webhook.DeliveryID(e.Env.ID, ep.ID)
	// The receiver has answered; the attempt is recorded just after.
	testenv.WaitFor(t, 5*time.Second, "the attempt recorded", func() bool { return h.delivery(id).Status != webhook.DeliveryPending })
	d := h.delivery(id)
	if d.Status != webhook.DeliveryDelivered || d.Attempts != 1 || d.LastStatusCode == nil || *d.LastStatusCode != 200 || d.DeliveredAt == nil {
		t.Errorf("delivery after success: %+v", d)
	}
	testenv.WaitFor(t, 5*time.Second, "last_delivery_at", func() bool {
		got, err := h.a.Webhooks.GetEndpoint(h.ctx, ep.ID)
		return err == nil && got.LastDeliveryAt != nil && got.ConsecutiveFailures == 0
	})
}

// A receiver failing the first two attempts gets the third with the same
// envelope id and body; every attempt is recorded.
func TestRetriesFollowTheScheduleWithTheSameEnvelope(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	rc := newReceiver(t)
	rc.status = func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	}
	ep, secret := h.endpoint(rc, true)
	o := h.order(h.a.Sales)
	start := time.Now()
	h.simulate(o.ID, ticketing.OutcomePaid)
	testenv.WaitFor(t, 15*time.Second, "three attempts", func() bool { return len(rc.events()) >= 3 })
	got := rc.events()
	for i, e := range got {
		if e.Env.ID != got[0].Env.ID || string(e.Body) != string(got[0].Body) {
			t.Errorf("attempt %d sent envelope %s (%d bytes), first sent %s", i+1, e.Env.ID, len(e.Body), got[0].Env.ID)
		}
		checkSigned(t, e, secret)
	}
	if elapsed := time.Since(start); elapsed < 2*time.Second {
		t.Errorf("3 attempts took %s; the schedule waits 1 s between attempts", elapsed)
	}
	id := webhook.DeliveryID(got[0].Env.ID, ep.ID)
	testenv.WaitFor(t, 5*time.Second, "delivered", func() bool { return h.delivery(id).Status == webhook.DeliveryDelivered })
	d := h.delivery(id)
	if d.Attempts != 3 || len(d.Log) != 3 || d.Log[0].StatusCode != 503 || d.Log[1].StatusCode != 503 || d.Log[2].StatusCode != 204 {
		t.Errorf("delivery %+v, log %+v", d, d.Log)
	}
	if d.Log[0].Error == "" || d.Log[2].Error != "" {
		t.Errorf("attempt errors: %+v", d.Log)
	}
	h.settled()
	if n := len(rc.events()); n != 3 {
		t.Errorf("receiver got %d POSTs after the delivery succeeded, want 3", n)
	}
}

// After a rotation both secrets sign, each signature valid with its own secret.
func TestRotationSignsWithBothSecrets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	rc := newReceiver(t)
	ep, oldSecret := h.endpoint(rc, true)
	_, newSecret, err := h.a.Webhooks.RotateSecret(h.ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)
	e := eventFor(t, rc, ticketing.EventOrderPaid, o.ID)
	header := e.Header.Get(webhook.SignatureHeader)
	if strings.Count(header, "v1=") != 2 {
		t.Fatalf("header %q: want two v1 signatures", header)
	}
	checkSigned(t, e, oldSecret, newSecret)

	// After the overlap only the new secret signs.
	h.a.Webhooks.Settings.RotationOverlap = 0
	o2 := h.order(h.a.Sales)
	h.simulate(o2.ID, ticketing.OutcomePaid)
	e = eventFor(t, rc, ticketing.EventOrderPaid, o2.ID)
	checkSigned(t, e, newSecret)
	if err := webhook.Verify(e.Header.Get(webhook.SignatureHeader), e.Body, oldSecret, time.Now(), webhook.Tolerance); err == nil {
		t.Error("the old secret still verifies after the overlap")
	}
}

// Unverified, disabled and unsubscribed endpoints get nothing.
func TestOnlyVerifiedActiveSubscribedEndpointsReceive(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	control, unverified, disabled, refundsOnly := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	cep, _ := h.endpoint(control, true)
	uep, _ := h.endpoint(unverified, false)
	dep, _ := h.endpoint(disabled, true)
	rep, _ := h.endpoint(refundsOnly, true, ticketing.EventOrderRefunded)
	if _, err := h.a.Webhooks.DisableEndpoint(h.ctx, dep.ID); err != nil {
		t.Fatal(err)
	}
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)
	e := eventFor(t, control, ticketing.EventOrderPaid, o.ID)
	h.settled()
	for name, rc := range map[string]*receiver{"unverified": unverified, "disabled": disabled, "refunds-only": refundsOnly} {
		if n := len(rc.events()); n != 0 {
			t.Errorf("%s endpoint got %d events", name, n)
		}
	}
	for _, ep := range []*webhook.Endpoint{uep, dep, rep} {
		if _, err := h.a.Store.GetDelivery(h.ctx, webhook.DeliveryID(e.Env.ID, ep.ID)); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("a delivery exists for %s: %v", ep.ID, err)
		}
	}
	cid := webhook.DeliveryID(e.Env.ID, cep.ID)
	testenv.WaitFor(t, 5*time.Second, "the control delivery delivered", func() bool { return h.delivery(cid).Status == webhook.DeliveryDelivered })
}

// An endpoint that never delivered is disabled after DisableFailuresNew
// consecutive failures; its pending delivery is skipped, and nothing more is sent.
func TestFailingEndpointIsDisabled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	h.a.Webhooks.Settings.DisableFailuresNew = 3
	rc := newReceiver(t)
	rc.status = func(int) int { return http.StatusInternalServerError }
	ep, _ := h.endpoint(rc, true)
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)
	testenv.WaitFor(t, 15*time.Second, "endpoint disabled", func() bool {
		got, err := h.a.Webhooks.GetEndpoint(h.ctx, ep.ID)
		return err == nil && got.Status == webhook.EndpointDisabled
	})
	got, _ := h.a.Webhooks.GetEndpoint(h.ctx, ep.ID)
	if got.ConsecutiveFailures != 3 || !strings.Contains(got.DisabledReason, "3 consecutive failed deliveries") {
		t.Errorf("disabled endpoint: failures %d, reason %q", got.ConsecutiveFailures, got.DisabledReason)
	}
	id := webhook.DeliveryID(rc.events()[0].Env.ID, ep.ID)
	testenv.WaitFor(t, 5*time.Second, "delivery skipped", func() bool { return h.delivery(id).Status == webhook.DeliverySkipped })
	h.settled()
	if n := len(rc.events()); n != 3 {
		t.Errorf("receiver got %d POSTs, want 3 (disabled after the third)", n)
	}
}

// Redelivery: a fresh schedule for a delivered delivery, the same envelope id;
// 409 while pending or when the endpoint is disabled; 404 for another organizer.
func TestRedeliver(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	rc := newReceiver(t)
	ep, secret := h.endpoint(rc, true)
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)
	first := eventFor(t, rc, ticketing.EventOrderPaid, o.ID)
	id := webhook.DeliveryID(first.Env.ID, ep.ID)
	testenv.WaitFor(t, 5*time.Second, "delivered", func() bool { return h.delivery(id).Status == webhook.DeliveryDelivered })

	code := func(err error) ticketing.Code {
		var e *ticketing.Error
		if errors.As(err, &e) {
			return e.Code
		}
		return ""
	}
	if _, err := h.a.Webhooks.Redeliver(h.ctx, "org_other", ticketing.EnvTest, id); code(err) != ticketing.CodeNotFound {
		t.Errorf("another organizer's redeliver: %v", err)
	}
	if _, err := h.a.Webhooks.Redeliver(h.ctx, "org_l", ticketing.EnvLive, id); code(err) != ticketing.CodeNotFound {
		t.Errorf("the live environment's redeliver of a test delivery: %v", err)
	}
	h.a.Webhooks.Settings.RedeliverDelay = 1500 * time.Millisecond
	d, err := h.a.Webhooks.Redeliver(h.ctx, "org_l", ticketing.EnvTest, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != webhook.DeliveryPending || d.Attempts != 0 || d.Gen != 2 || d.DeliveredAt != nil {
		t.Errorf("redelivered: %+v", d)
	}
	if _, err := h.a.Webhooks.Redeliver(h.ctx, "org_l", ticketing.EnvTest, id); code(err) != ticketing.CodeConflict {
		t.Errorf("redeliver of a pending delivery: %v", err)
	}
	testenv.WaitFor(t, 10*time.Second, "second POST", func() bool { return len(rc.events()) == 2 })
	second := rc.events()[1]
	if second.Env.ID != first.Env.ID {
		t.Errorf("redelivery sent envelope %s, first %s", second.Env.ID, first.Env.ID)
	}
	checkSigned(t, second, secret)
	testenv.WaitFor(t, 5*time.Second, "delivered again", func() bool { return h.delivery(id).Status == webhook.DeliveryDelivered })
	if d := h.delivery(id); d.Attempts != 1 || len(d.Log) != 2 || d.Log[1].Gen != 2 {
		t.Errorf("after redelivery: %+v log %+v", d, d.Log)
	}

	if _, err := h.a.Webhooks.DisableEndpoint(h.ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.a.Webhooks.Redeliver(h.ctx, "org_l", ticketing.EnvTest, id); code(err) != ticketing.CodeConflict {
		t.Errorf("redeliver to a disabled endpoint: %v", err)
	}
	if _, err := h.a.Webhooks.Redeliver(h.ctx, "org_l", ticketing.EnvTest, "whd_nope_nope"); code(err) != ticketing.CodeNotFound {
		t.Errorf("unknown delivery: %v", err)
	}
}

// failingPublisher is the process dying between an order's commit and the
// fan-out message: nothing is sent.
type failingPublisher struct{}

func (failingPublisher) Publish(context.Context, string) {}

// An event committed but never enqueued is found by the sweep and delivered.
func TestSweepDeliversAnEventThatWasNeverEnqueued(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	rc := newReceiver(t)
	h.endpoint(rc, true)
	h.a.Sales.Events = failingPublisher{}
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)
	h.settled()
	if n := len(rc.events()); n != 0 {
		t.Fatalf("got %d events without a fan-out message", n)
	}
	rep, err := h.a.Webhooks.Sweep(h.ctx)
	if err != nil || rep.Events != 0 {
		t.Fatalf("a sweep within the grace period took the event: %+v %v", rep, err)
	}
	h.clk.Advance(h.a.Webhooks.Settings.SweepGrace)
	if rep, err = h.a.Webhooks.Sweep(h.ctx); err != nil || rep.Events != 1 {
		t.Fatalf("sweep: %+v %v", rep, err)
	}
	eventFor(t, rc, ticketing.EventOrderPaid, o.ID)
	if rep, err = h.a.Webhooks.Sweep(h.ctx); err != nil || rep.Events != 0 {
		t.Errorf("a second sweep: %+v %v", rep, err)
	}
}

// dropAttempts is the process dying between a delivery's commit and its
// attempt message: the first n attempt messages are lost.
type dropAttempts struct {
	webhook.Queue
	mu sync.Mutex
	n  int
}

func (q *dropAttempts) Send(ctx context.Context, m webhook.Message, delay time.Duration) error {
	q.mu.Lock()
	drop := m.Kind == webhook.KindAttempt && q.n > 0
	if drop {
		q.n--
	}
	q.mu.Unlock()
	if drop {
		return errors.New("process died before the attempt was enqueued")
	}
	return q.Queue.Send(ctx, m, delay)
}

// A delivery committed without its attempt message, and a retry whose message
// is lost, are both found by the sweep once overdue, and delivered.
func TestSweepSendsAttemptsWhoseMessagesWereLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	q := &dropAttempts{Queue: h.a.Webhooks.Queue, n: 1} // the fan-out's attempt message is lost
	h.a.Webhooks.Queue = q
	rc := newReceiver(t)
	rc.status = func(n int) int {
		if n == 1 {
			q.mu.Lock()
			q.n = 1 // and so is the message of the retry after this failure
			q.mu.Unlock()
			return http.StatusBadGateway
		}
		return http.StatusOK
	}
	ep, _ := h.endpoint(rc, true)
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)
	h.settled() // the fan-out is handled: the delivery exists, its attempt message lost
	if n := len(rc.events()); n != 0 {
		t.Fatalf("got %d POSTs though the attempt message was lost", n)
	}
	sweepUntil := func(want int) {
		t.Helper()
		// Past the attempt's due time (the schedule waits at most 1 s here) and the grace.
		h.clk.Advance(time.Second + h.a.Webhooks.Settings.SweepGrace)
		testenv.WaitFor(t, 15*time.Second, "the sweep to resend", func() bool {
			if _, err := h.a.Webhooks.Sweep(h.ctx); err != nil {
				t.Fatal(err)
			}
			return len(rc.events()) >= want
		})
	}
	sweepUntil(1)
	id := webhook.DeliveryID(rc.events()[0].Env.ID, ep.ID)
	// The failure is recorded (and its retry message lost) before time moves on.
	testenv.WaitFor(t, 5*time.Second, "attempt 1 recorded", func() bool { return h.delivery(id).Attempts == 1 })
	sweepUntil(2)
	testenv.WaitFor(t, 5*time.Second, "delivered", func() bool { return h.delivery(id).Status == webhook.DeliveryDelivered })
	if d := h.delivery(id); d.Attempts != 2 {
		t.Errorf("attempts %d, want 2: %+v", d.Attempts, d.Log)
	}
	if q.n != 0 {
		t.Errorf("%d attempt messages were still to be lost: the test did not cut where it meant to", q.n)
	}
}

// failSaveOnce is the process dying after the POST and before the attempt is
// recorded: the message comes back and the attempt is made again, counted once.
type failSaveOnce struct {
	webhook.Store
	mu     sync.Mutex
	failed bool
}

func (s *failSaveOnce) SaveDelivery(ctx context.Context, d *webhook.Delivery) error {
	s.mu.Lock()
	fail := !s.failed && d.Attempts > 0
	s.failed = s.failed || fail
	s.mu.Unlock()
	if fail {
		return errors.New("process died before recording the attempt")
	}
	return s.Store.SaveDelivery(ctx, d)
}

// attemptMessages takes the deliveries queue's messages: it counts what is
// queued, delayed messages included (everything the handlers have sent so
// far, since a send returns once the message is stored), then receives and
// deletes that many, waiting for delayed ones to become visible.
func attemptMessages(t *testing.T, h *harness) []webhook.Message {
	t.Helper()
	n, err := h.a.Queue.Depth(h.ctx, queue.DeliveriesQueue)
	if err != nil {
		t.Fatal(err)
	}
	var out []webhook.Message
	testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("the %d queued messages", n), func() bool {
		ms, err := h.a.Queue.Receive(h.ctx, queue.DeliveriesQueue, 10, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			var msg webhook.Message
			if err := json.Unmarshal(m.Body, &msg); err != nil {
				t.Fatal(err)
			}
			out = append(out, msg)
			if err := h.a.Queue.Delete(h.ctx, queue.DeliveriesQueue, m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
		return len(out) >= n
	})
	return out
}

// SQS delivers a message twice (in turn and at once): the attempt is recorded
// once and exactly one next attempt is scheduled. A crash between POST and
// record makes the attempt again, still counted once.
func TestDuplicateMessagesDoNotCorruptAttempts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, false) // the test plays the deliver function
	rc := newReceiver(t)
	rc.status = func(int) int { return http.StatusInternalServerError }
	h.a.Webhooks.Settings.DisableFailuresNew = 100
	ep, _ := h.endpoint(rc, true)
	o := h.order(h.a.Sales)
	h.simulate(o.ID, ticketing.OutcomePaid)

	msgs := attemptMessages(t, h)
	if len(msgs) != 1 || msgs[0].Kind != webhook.KindFanout {
		t.Fatalf("queue after payment: %+v", msgs)
	}
	if err := h.a.HandleDeliveryMessage(h.ctx, mustJSON(t, msgs[0])); err != nil {
		t.Fatal(err)
	}
	// The fan-out delivered twice: the second does nothing.
	if err := h.a.HandleDeliveryMessage(h.ctx, mustJSON(t, msgs[0])); err != nil {
		t.Fatal(err)
	}
	msgs = attemptMessages(t, h)
	if len(msgs) != 1 || msgs[0].Kind != webhook.KindAttempt || msgs[0].N != 1 {
		t.Fatalf("after two fan-outs: %+v", msgs)
	}
	first := mustJSON(t, msgs[0])

	// Attempt 1 delivered five times at once, then once more.
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if err := h.a.HandleDeliveryMessage(h.ctx, first); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := h.a.HandleDeliveryMessage(h.ctx, first); err != nil {
		t.Fatal(err)
	}
	id := msgs[0].DeliveryID
	d := h.delivery(id)
	if d.Attempts != 1 || len(d.Log) != 1 || d.Status != webhook.DeliveryPending {
		t.Fatalf("after duplicates of attempt 1: attempts %d, log %+v", d.Attempts, d.Log)
	}
	msgs = attemptMessages(t, h) // attempt 2 waits 1 s
	if len(msgs) != 1 || msgs[0].N != 2 {
		t.Fatalf("next attempts scheduled: %+v, want exactly attempt 2", msgs)
	}
	if posts := len(rc.events()); posts < 1 || posts > 5 {
		t.Errorf("receiver got %d POSTs of attempt 1", posts)
	}

	// The process dies after POSTing attempt 2, before recording it.
	h.a.Webhooks.Store = &failSaveOnce{Store: h.a.Webhooks.Store}
	before := len(rc.events())
	second := mustJSON(t, msgs[0])
	if err := h.a.HandleDeliveryMessage(h.ctx, second); err == nil {
		t.Fatal("the cut attempt reported success")
	}
	if err := h.a.HandleDeliveryMessage(h.ctx, second); err != nil { // SQS gives it back
		t.Fatal(err)
	}
	d = h.delivery(id)
	if d.Attempts != 2 || len(d.Log) != 2 || len(rc.events()) != before+2 {
		t.Errorf("after the cut: attempts %d, log %d, POSTs %d (want 2, 2, %d)", d.Attempts, len(d.Log), len(rc.events()), before+2)
	}
	if f, err := h.a.Webhooks.GetEndpoint(h.ctx, ep.ID); err != nil || f.ConsecutiveFailures < 2 {
		t.Errorf("endpoint failures after two failed attempts: %+v %v", f, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
