package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// paidAfterRefunded is a host in front of a receiver that is down for
// order.paid (503) until it has passed on the order's order.refunded: the
// paid event's retry comes after the refund.
type paidAfterRefunded struct {
	target   string
	refunded atomic.Bool
	refused  atomic.Int32
}

func (p *paidAfterRefunded) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(body, &ev)
	if ev.Type == ticketing.EventOrderPaid && !p.refunded.Load() {
		p.refused.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, p.target, bytes.NewReader(body))
	req.Header = r.Header.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer func() { _ = res.Body.Close() }()
	if ev.Type == ticketing.EventOrderRefunded && res.StatusCode == http.StatusOK {
		p.refunded.Store(true)
	}
	w.WriteHeader(res.StatusCode)
	_, _ = io.Copy(w, res.Body)
}

// order.paid delivered after order.refunded, through the real delivery path
// (DynamoDB Local, fauxqs, the deliveries queue; the refund settles at once
// through the refund-outcome test helper), to both sample
// receivers (Go and Node), each its own endpoint: each keeps refunded, by
// data.order.version, and the kept version is the one GET /orders/{id} shows.
func TestReceiverKeepsRefundedWhenPaidArrivesLate(t *testing.T) {
	a := lambdaenv.New(t).App
	app.AllowLoopbackWebhooks(a.Webhooks, a.Config)
	a.Webhooks.Settings.Schedule = []time.Duration{0, time.Second, time.Second, time.Second, time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() {
		_ = a.Queue.Consume(ctx, queue.DeliveriesQueue, func(ctx context.Context, m queue.Message) error { return a.HandleDeliveryMessage(ctx, m.Body) })
	})
	tenant := ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}
	type hooked struct {
		url   string
		out   func() string
		hosts *paidAfterRefunded
	}
	receivers := map[string]*hooked{}
	for name, start := range sampleReceivers(t) {
		h := &hooked{hosts: &paidAfterRefunded{}}
		srv := httptest.NewServer(h.hosts)
		t.Cleanup(srv.Close)
		ep, secret, err := a.Webhooks.CreateEndpoint(ctx, webhook.NewEndpoint{OrganizerID: tenant.OrganizerID, Environment: tenant.Environment, URL: srv.URL + "/hooks"})
		if err != nil {
			t.Fatal(err)
		}
		h.url, h.out = start(secret)
		h.hosts.target = h.url
		if _, res, err := a.Webhooks.VerifyEndpoint(ctx, ep.ID); err != nil || !res.OK {
			t.Fatalf("verify %s: %+v %v", name, res, err)
		}
		receivers[name] = h
	}
	id := paidThenRefunded(t, a, tenant, func() bool {
		for _, h := range receivers {
			if h.hosts.refused.Load() == 0 {
				return false
			}
		}
		return true
	})
	for name, h := range receivers {
		testenv.WaitFor(t, 20*time.Second, name+": the late order.paid acknowledged and ignored", func() bool {
			return strings.Contains(h.out(), "verified order.paid") && strings.Contains(h.out(), "ignored")
		})
	}
	final, err := a.Sales.Orders.Order(ctx, tenant, id)
	if err != nil || final.Status != ticketing.OrderRefunded {
		t.Fatalf("the order: %+v %v", final, err)
	}
	for name, h := range receivers {
		var kept map[string]orderState
		res, err := http.Get(h.url + "/orders")
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewDecoder(res.Body).Decode(&kept)
		_ = res.Body.Close()
		if k := kept[id]; k.Status != "refunded" || k.Version < 3 || k.Version != final.Webhook().Version {
			t.Errorf("%s receiver keeps %+v; the order is %s at version %d", name, k, final.Status, final.Webhook().Version)
		}
		lines := h.out()
		if strings.Index(lines, "verified order.refunded") > strings.Index(lines, "verified order.paid") {
			t.Errorf("%s: order.paid was not delivered after order.refunded:\n%s", name, lines)
		}
		t.Logf("%s receiver output:\n%s", name, lines)
	}
}

// paidThenRefunded sells one order of tier_l, pays it, waits until refusedPaid
// holds, and refunds it; it returns the order id.
func paidThenRefunded(t *testing.T, a *app.App, tenant ticketing.Tenant, refusedPaid func() bool) string {
	t.Helper()
	ctx := context.Background()
	tier, qty, email := "tier_l", 1, "buyer@example.com"
	created, err := a.Sales.Orders.CreateOrder(ctx, ticketing.Caller{Tenant: tenant, KeyID: "key_l"}, webhook.NewSecret(),
		ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Order.ID
	if _, err := a.Sales.Orders.Simulate(ctx, tenant, id, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "order.paid refused by every receiver's host", refusedPaid)
	if _, err := a.Sales.Orders.RefundOrder(ctx, tenant, id, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Sales.Tests.RefundOutcome(ctx, tenant, id, "settle"); err != nil { // settles now (the test helper)
		t.Fatal(err)
	}
	return id
}
