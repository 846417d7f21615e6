package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
	"tix/internal/webhook"
	"tix/internal/webhook/webhooktest"
)

// recordingReceiver answers endpoint.verify and keeps every other envelope.
type recordingReceiver struct {
	mu        sync.Mutex
	envelopes []map[string]any
}

func (rc *recordingReceiver) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env map[string]any
		if _, ok := webhooktest.Receive(w, r, &env); !ok {
			return
		}
		rc.mu.Lock()
		rc.envelopes = append(rc.envelopes, env)
		rc.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// deliver fans out and attempts each event to ep, as the deliveries consumer would.
func deliver(t *testing.T, h *harness, svc *webhook.Service, ep *webhook.Endpoint, eventIDs []string) {
	t.Helper()
	for _, id := range eventIDs {
		for _, m := range []webhook.Message{
			{Kind: webhook.KindFanout, EventID: id, Due: h.clk.Now()},
			{Kind: webhook.KindAttempt, DeliveryID: webhook.DeliveryID(id, ep.ID), Gen: 1, N: 1, Due: h.clk.Now()},
		} {
			h.clk.Advance(2 * time.Second)
			body, _ := json.Marshal(m)
			if err := svc.HandleMessage(context.Background(), body); err != nil {
				t.Fatalf("handle %s: %v", body, err)
			}
		}
	}
}

var oneFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// One instant is one string: an order's created_at and paid_at read through
// the API equal those of its webhooks' data.order, and every timestamp of the
// envelope and the order has the same RFC 3339 UTC second-precision format,
// even when the clock has sub-second digits.
func TestTimestamps_OneFormatInResponsesAndWebhooks(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	svc, pub := h.withWebhooks()
	sk, _ := h.key(orgA, auth.Secret)
	rc := &recordingReceiver{}
	ep, _, err := svc.CreateEndpoint(context.Background(), webhook.NewEndpoint{OrganizerID: orgA, Environment: ticketing.EnvTest, URL: rc.start(t) + "/hooks"})
	if err != nil {
		t.Fatal(err)
	}
	if ep, _, err = svc.VerifyEndpoint(context.Background(), ep.ID); err != nil || !ep.Verified {
		t.Fatalf("verify: %v", err)
	}

	h.clk.Advance(123456789 * time.Nanosecond)
	created := h.mustOrder(sk, "ts-1", gaBody("evt_concert_ga", 1))
	id := created["id"].(string)
	h.clk.Advance(1987654321 * time.Nanosecond)
	paid := h.mustPay(sk, id)
	deliver(t, h, svc, ep, pub.take())

	r := h.get("/v1/orders/"+id, sk)
	wantStatus(t, r, http.StatusOK)
	order := r.json(t)
	for _, m := range []map[string]any{created, paid, order} {
		if m["created_at"] != order["created_at"] {
			t.Errorf("created_at %v differs from GET /orders/{id}'s %v", m["created_at"], order["created_at"])
		}
	}
	if paid["paid_at"] != order["paid_at"] {
		t.Errorf("paid_at %v of simulate-payment differs from GET's %v", paid["paid_at"], order["paid_at"])
	}
	for _, f := range []string{"created_at", "paid_at"} {
		if s, _ := order[f].(string); !oneFormat.MatchString(s) {
			t.Errorf("order %s %q is not RFC 3339 UTC at second precision", f, s)
		}
	}

	// The refund's order.refunded event too; it says is_paid false.
	wantStatus(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusOK)
	h.clk.Advance(31 * time.Second)
	wantStatus(t, h.get("/v1/orders/"+id+"/refund", sk), http.StatusOK)
	deliver(t, h, svc, ep, pub.take())

	rc.mu.Lock()
	envs := rc.envelopes
	rc.mu.Unlock()
	seen := map[string]bool{}
	for _, env := range envs {
		typ, _ := env["type"].(string)
		seen[typ] = true
		if s, _ := env["created_at"].(string); !oneFormat.MatchString(s) {
			t.Errorf("%s envelope created_at %q is not RFC 3339 UTC at second precision", typ, s)
		}
		o := env["data"].(map[string]any)["order"].(map[string]any)
		if o["id"] != id {
			t.Fatalf("%s envelope for order %v, want %s", typ, o["id"], id)
		}
		if o["created_at"] != order["created_at"] || o["paid_at"] != order["paid_at"] {
			t.Errorf("%s data.order created_at %v paid_at %v, want %v and %v as GET /orders/{id} says",
				typ, o["created_at"], o["paid_at"], order["created_at"], order["paid_at"])
		}
		if want := typ == ticketing.EventOrderPaid; o["is_paid"] != want {
			t.Errorf("%s data.order is_paid %v, want %v", typ, o["is_paid"], want)
		}
	}
	if !seen[ticketing.EventOrderPaid] || !seen[ticketing.EventOrderRefunded] || len(envs) != 2 {
		t.Fatalf("received %d envelopes of types %v, want order.paid and order.refunded", len(envs), seen)
	}
}

// wantOrderEventNotPaid checks the stored outbox event of type typ for order
// id: exactly one, and its data.order says is_paid false.
func (h *harness) wantOrderEventNotPaid(typ, id string) {
	h.t.Helper()
	ctx := context.Background()
	evIDs, err := h.st.Webhooks.UndispatchedEvents(ctx, h.clk.Now().Add(time.Hour), 100)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, evID := range evIDs {
		ev, _, err := h.st.Webhooks.GetOrderEvent(ctx, evID)
		if err != nil {
			h.t.Fatal(err)
		}
		if ev.Type == typ && ev.Order.ID == id {
			n++
			if ev.Order.IsPaid {
				h.t.Errorf("%s data.order: status %s is_paid true, want false", typ, ev.Order.Status)
			}
		}
	}
	if n != 1 {
		h.t.Errorf("%d %s events for %s, want 1", n, typ, id)
	}
}
