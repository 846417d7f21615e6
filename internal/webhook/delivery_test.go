package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"tix/internal/webhook/webhooktest"
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
		var g received
		body, ok := webhooktest.Receive(w, r, &g.Env)
		if !ok {
			return
		}
		g.Header, g.Body = r.Header.Clone(), body
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
	res, err := sales.Orders.CreateOrder(h.ctx, ticketing.Caller{Tenant: h.tenant, KeyID: "key_l"}, webhook.NewSecret(), ticketing.OrderRequest{
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
	if _, err := h.a.Sales.Orders.Simulate(h.ctx, h.tenant, id, outcome); err != nil {
		h.t.Fatal(err)
	}
}

// eventFor waits for the receiver's event of type typ for order id.
func eventFor(t *testing.T, rc *receiver, typ, id string) received {
	t.Helper()
	var got received
	testenv.WaitFor(t, 30*time.Second, typ+" of "+id, func() bool {
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
		if err := goStandardVerify(t, s, e.Header, e.Body); err != nil {
			t.Errorf("%s of %s: the Standard Webhooks headers do not verify with %s: %v", e.Env.Type, e.Order.ID, s[:10], err)
		}
	}
	if got := e.Header.Get(webhook.StandardIDHeader); got != e.Env.ID {
		t.Errorf("webhook-id %q, envelope id %q", got, e.Env.ID)
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
	d, err := h.a.Store.Webhooks.GetDelivery(h.ctx, id)
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

	sales := h.a.Sales
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

	expiring := h.order(sales) // expires now, as its timer would expire it (the test helper)
	if _, err := sales.Tests.ExpireOrder(h.ctx, h.tenant, expiring.ID); err != nil {
		t.Fatal(err)
	}
	e = eventFor(t, rc, ticketing.EventOrderCancelled, expiring.ID)
	checkSigned(t, e, secret)
	if e.Order.Status != "cancelled" {
		t.Errorf("expiry carries %+v", e.Order)
	}

	if _, err := sales.Orders.RefundOrder(h.ctx, h.tenant, paid.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sales.Tests.RefundOutcome(h.ctx, h.tenant, paid.ID, "settle"); err != nil { // settles now (the test helper)
		t.Fatal(err)
	}
	e = eventFor(t, rc, ticketing.EventOrderRefunded, paid.ID)
	checkSigned(t, e, secret)
	if e.Order.Status != "refunded" {
		t.Errorf("order.refunded carries %+v", e.Order)
	}

	id := webhook.DeliveryID(e.Env.ID, ep.ID)
	// The receiver has answered; the attempt is recorded just after.
	testenv.WaitFor(t, 30*time.Second, "the attempt recorded", func() bool { return h.delivery(id).Status != webhook.DeliveryPending })
	d := h.delivery(id)
	if d.Status != webhook.DeliveryDelivered || d.Attempts != 1 || d.LastStatusCode == nil || *d.LastStatusCode != 200 || d.DeliveredAt == nil {
		t.Errorf("delivery after success: %+v", d)
	}
	testenv.WaitFor(t, 30*time.Second, "last_delivery_at", func() bool {
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
	testenv.WaitFor(t, 30*time.Second, "three attempts", func() bool { return len(rc.events()) >= 3 })
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
	testenv.WaitFor(t, 30*time.Second, "delivered", func() bool { return h.delivery(id).Status == webhook.DeliveryDelivered })
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
	if std := e.Header.Get(webhook.StandardSignatureHeader); strings.Count(std, "v1,") != 2 {
		t.Fatalf("webhook-signature %q: want two v1 signatures", std)
	}
	for _, s := range []string{oldSecret, newSecret} {
		if ok := nodeStandardVerify(t, s, []http.Header{e.Header}, [][]byte{e.Body}); !ok[0] {
			t.Errorf("npm standardwebhooks refuses the delivery with the %s secret during the rotation", s[:10])
		}
	}

	// After the overlap only the new secret signs.
	h.a.Webhooks.Settings.RotationOverlap = 0
	o2 := h.order(h.a.Sales)
	h.simulate(o2.ID, ticketing.OutcomePaid)
	e = eventFor(t, rc, ticketing.EventOrderPaid, o2.ID)
	checkSigned(t, e, newSecret)
	if err := webhook.Verify(e.Header.Get(webhook.SignatureHeader), e.Body, oldSecret, time.Now(), webhook.Tolerance); err == nil {
		t.Error("the old secret still verifies after the overlap")
	}
	if err := goStandardVerify(t, oldSecret, e.Header, e.Body); err == nil {
		t.Error("the old secret still verifies the Standard Webhooks headers after the overlap")
	}
	if ok := nodeStandardVerify(t, oldSecret, []http.Header{e.Header}, [][]byte{e.Body}); ok[0] {
		t.Error("npm standardwebhooks accepts the old secret after the overlap")
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
		if _, err := h.a.Store.Webhooks.GetDelivery(h.ctx, webhook.DeliveryID(e.Env.ID, ep.ID)); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("a delivery exists for %s: %v", ep.ID, err)
		}
	}
	cid := webhook.DeliveryID(e.Env.ID, cep.ID)
	testenv.WaitFor(t, 30*time.Second, "the control delivery delivered", func() bool { return h.delivery(cid).Status == webhook.DeliveryDelivered })
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
	testenv.WaitFor(t, 30*time.Second, "endpoint disabled", func() bool {
		got, err := h.a.Webhooks.GetEndpoint(h.ctx, ep.ID)
		return err == nil && got.Status == webhook.EndpointDisabled
	})
	got, _ := h.a.Webhooks.GetEndpoint(h.ctx, ep.ID)
	if got.ConsecutiveFailures != 3 || !strings.Contains(got.DisabledReason, "3 consecutive failed deliveries") {
		t.Errorf("disabled endpoint: failures %d, reason %q", got.ConsecutiveFailures, got.DisabledReason)
	}
	id := webhook.DeliveryID(rc.events()[0].Env.ID, ep.ID)
	testenv.WaitFor(t, 30*time.Second, "delivery skipped", func() bool { return h.delivery(id).Status == webhook.DeliverySkipped })
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
	testenv.WaitFor(t, 30*time.Second, "delivered", func() bool { return h.delivery(id).Status == webhook.DeliveryDelivered })

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
	testenv.WaitFor(t, 30*time.Second, "second POST", func() bool { return len(rc.events()) == 2 })
	second := rc.events()[1]
	if second.Env.ID != first.Env.ID {
		t.Errorf("redelivery sent envelope %s, first %s", second.Env.ID, first.Env.ID)
	}
	checkSigned(t, second, secret)
	testenv.WaitFor(t, 30*time.Second, "delivered again", func() bool { return h.delivery(id).Status == webhook.DeliveryDelivered })
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
