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

// order.paid delivered after order.refunded, through the real delivery path
// (DynamoDB Local, fauxqs, the deliveries and timers queues): the receiver's
// host answers 503 to order.paid until the order's refund has arrived, so the
// paid event's retry comes after it. The sample receiver keeps refunded, by
// data.order.version, and the kept version is the one GET /orders/{id} shows.
func TestReceiverKeepsRefundedWhenPaidArrivesLate(t *testing.T) {
	a := lambdaenv.New(t).App
	app.AllowLoopbackWebhooks(a.Webhooks, a.Config)
	a.Webhooks.Settings.Schedule = []time.Duration{0, time.Second, time.Second, time.Second, time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for q, handle := range map[string]func(context.Context, []byte) error{
		queue.DeliveriesQueue: a.HandleDeliveryMessage, queue.TimersQueue: a.HandleTimerMessage} {
		wg.Go(func() {
			_ = a.Queue.Consume(ctx, q, func(ctx context.Context, m queue.Message) error { return handle(ctx, m.Body) })
		})
	}

	var out testenv.SyncBuffer
	rc := receiver{out: &out, now: time.Now, orders: &orderStates{}}
	var refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			Type string `json:"type"`
			Data struct {
				Order struct{ ID string } `json:"order"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		if kept, _ := rc.orders.get(ev.Data.Order.ID); ev.Type == ticketing.EventOrderPaid && kept.Status != "refunded" {
			refused.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable) // the host is down for order.paid
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rc.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tenant := ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}
	ep, secret, err := a.Webhooks.CreateEndpoint(ctx, webhook.NewEndpoint{OrganizerID: tenant.OrganizerID, Environment: tenant.Environment, URL: srv.URL + "/hooks"})
	if err != nil {
		t.Fatal(err)
	}
	rc.secret = secret
	if _, res, err := a.Webhooks.VerifyEndpoint(ctx, ep.ID); err != nil || !res.OK {
		t.Fatalf("verify: %+v %v", res, err)
	}

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
	testenv.WaitFor(t, 10*time.Second, "order.paid refused once", func() bool { return refused.Load() > 0 })
	cfg := a.Config
	cfg.RefundDelay = time.Second
	sales := app.NewSales(cfg, a.Store.Sales(), a.Timers, nil)
	sales.Deps.Events = a.Webhooks
	if _, err := sales.Orders.RefundOrder(ctx, tenant, id, nil); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the late order.paid acknowledged and ignored", func() bool {
		return strings.Contains(out.String(), "verified order.paid") && strings.Contains(out.String(), "ignored")
	})

	kept, _ := rc.orders.get(id)
	final, err := a.Sales.Orders.Order(ctx, tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	if kept.Status != "refunded" || kept.Version < 3 || kept.Version != final.Webhook().Version || final.Status != ticketing.OrderRefunded {
		t.Errorf("receiver keeps %+v; the order is %s at version %d", kept, final.Status, final.Webhook().Version)
	}
	lines := out.String()
	if strings.Index(lines, "verified order.refunded") > strings.Index(lines, "verified order.paid") {
		t.Errorf("order.paid was not delivered after order.refunded:\n%s", lines)
	}
	t.Logf("receiver output:\n%s", lines)
}
