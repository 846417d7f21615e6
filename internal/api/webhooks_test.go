package api_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
	"tix/internal/webhook/webhooktest"
)

// The webhooks group through the real router: GET /webhook-endpoints, GET
// /webhook-deliveries and POST /webhook-deliveries/{id}/redeliver over a real
// webhook.Service (DynamoDB Local, the SQS deliveries queue on fauxqs, the
// AES secret box with the local keyring, the real sender POSTing to httptest
// receivers on 127.0.0.1). Orders are created and paid through the API; no
// queue consumer runs: the tests hand the fan-out and attempt messages to
// Service.HandleMessage themselves, so every step is deterministic.

// publishedEvents records the outbox events the sales path publishes and
// hands them on to the webhook service (which sends the fan-out message).
type publishedEvents struct {
	mu   sync.Mutex
	ids  []string
	next ticketing.EventPublisher
}

func (p *publishedEvents) Publish(ctx context.Context, eventID string) {
	p.mu.Lock()
	p.ids = append(p.ids, eventID)
	p.mu.Unlock()
	p.next.Publish(ctx, eventID)
}

func (p *publishedEvents) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := p.ids
	p.ids = nil
	return ids
}

// withWebhooks wires a real webhook service into the harness's Server (and
// the sales path's publisher) and returns it.
func (h *harness) withWebhooks() (*webhook.Service, *publishedEvents) {
	h.t.Helper()
	ctx := context.Background()
	c, err := queue.Open(ctx, "us-east-1", testenv.SQSEndpoint(h.t), testenv.UniqueName("tix-test"))
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := c.EnsureQueues(ctx); err != nil {
		h.t.Fatalf("create the queues (is fauxqs running at %s?): %v", testenv.SQSEndpoint(h.t), err)
	}
	box, err := webhook.NewAESBox(config.LocalKeyring)
	if err != nil {
		h.t.Fatal(err)
	}
	svc := &webhook.Service{
		Store: h.st.Webhooks, Queue: queue.NewDeliveries(c), Box: box, Clock: h.clk,
		Sender:   webhook.NewSender(webhook.SenderOptions{Timeout: 5 * time.Second, AllowLoopback: true}),
		Settings: webhook.DefaultSettings,
	}
	h.srv.Webhooks = svc
	pub := &publishedEvents{next: svc}
	h.sales.Deps.Events = pub
	return svc, pub
}

// hookReceiver answers endpoint.verify with the nonce and every other POST
// with status.
type hookReceiver struct {
	srv    *httptest.Server
	status int
	mu     sync.Mutex
	posts  int // order events received
}

func newHookReceiver(t *testing.T, status int) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{status: status}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := webhooktest.Receive(w, r, nil); !ok {
			return
		}
		rc.mu.Lock()
		rc.posts++
		rc.mu.Unlock()
		w.WriteHeader(rc.status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *hookReceiver) received() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.posts
}

// hookWorld is the fixture of the webhook tests:
//
//   - org A, test: epOK (all events, no description, answers 200), epBad
//     (order.paid only, described, answers 500), epNew (never verified);
//     org A, live: epLive; org B, test: epB (answers 200).
//   - order events of org A, each fanned out one second after the previous:
//     e1 paid (ok1, bad1), e2 cancelled (ok2 only), e3 paid (ok3, bad3), e4
//     paid fanned out with a one-attempt schedule (ok4, bad4); org B: eB paid (b1).
//
// After attemptAll: ok* and b1 delivered, bad1 and bad3 pending after a
// failed first attempt, bad4 failed.
type hookWorld struct {
	h   *harness
	t   *testing.T
	svc *webhook.Service
	pub *publishedEvents
	ctx context.Context

	skA, skALive, skB string

	okRC, badRC                     *hookReceiver
	epOK, epBad, epNew, epLive, epB *webhook.Endpoint
	secrets                         map[string]string // endpoint id -> plaintext secret

	orders                                   map[string]string // delivery id -> order id
	ok1, bad1, ok2, ok3, bad3, ok4, bad4, b1 string
	attemptedAt                              map[string]time.Time // delivery id -> its last attempt
	fannedOut                                map[string]time.Time // delivery id -> created_at
}

func newHookWorld(t *testing.T) *hookWorld {
	t.Helper()
	h := newHarness(t)
	h.seedCatalog()
	svc, pub := h.withWebhooks()
	w := &hookWorld{h: h, t: t, svc: svc, pub: pub, ctx: context.Background(),
		secrets: map[string]string{}, orders: map[string]string{},
		attemptedAt: map[string]time.Time{}, fannedOut: map[string]time.Time{}}
	w.skA, _ = h.key(orgA, auth.Secret)
	w.skALive, _ = h.key(orgA, auth.Secret, withEnv(ticketing.EnvLive))
	w.skB, _ = h.key(orgB, auth.Secret)

	w.okRC = newHookReceiver(t, http.StatusOK)
	w.badRC = newHookReceiver(t, http.StatusInternalServerError)
	w.epOK = w.endpoint(orgA, ticketing.EnvTest, w.okRC.srv.URL+"/hooks", nil, true)
	w.epBad = w.endpoint(orgA, ticketing.EnvTest, w.badRC.srv.URL+"/hooks", sp("Backup receiver"), true, ticketing.EventOrderPaid)
	w.epNew = w.endpoint(orgA, ticketing.EnvTest, w.okRC.srv.URL+"/unverified", nil, false)
	w.epLive = w.endpoint(orgA, ticketing.EnvLive, "https://hooks.example.com/tix", sp("Production"), false)
	w.epB = w.endpoint(orgB, ticketing.EnvTest, w.okRC.srv.URL+"/org-b", nil, true)

	e1, o1 := w.orderEvent(w.skA, "wh-1", "evt_concert_ga", ticketing.OutcomePaid)
	w.fanout(svc, e1)
	e2, o2 := w.orderEvent(w.skA, "wh-2", "evt_concert_ga", ticketing.OutcomeCancelled)
	w.fanout(svc, e2)
	e3, o3 := w.orderEvent(w.skA, "wh-3", "evt_concert_ga", ticketing.OutcomePaid)
	w.fanout(svc, e3)
	e4, o4 := w.orderEvent(w.skA, "wh-4", "evt_concert_ga", ticketing.OutcomePaid)
	// A service with a one-attempt schedule fans e4 out, so that bad4
	// fails for good after its first attempt (max_attempts 1).
	short := *svc
	short.Settings.Schedule = []time.Duration{0}
	w.fanout(&short, e4)
	eB, oB := w.orderEvent(w.skB, "wh-b", "evt_other_ga", ticketing.OutcomePaid)
	w.fanout(svc, eB)

	id := webhook.DeliveryID
	w.ok1, w.bad1 = id(e1, w.epOK.ID), id(e1, w.epBad.ID)
	w.ok2 = id(e2, w.epOK.ID)
	w.ok3, w.bad3 = id(e3, w.epOK.ID), id(e3, w.epBad.ID)
	w.ok4, w.bad4 = id(e4, w.epOK.ID), id(e4, w.epBad.ID)
	w.b1 = id(eB, w.epB.ID)
	for d, o := range map[string]string{w.ok1: o1, w.bad1: o1, w.ok2: o2, w.ok3: o3, w.bad3: o3, w.ok4: o4, w.bad4: o4, w.b1: oB} {
		w.orders[d] = o
		w.fannedOut[d] = w.stored(d).CreatedAt
	}
	// Fan-out wrote exactly these: nothing for the unverified, the live or
	// the unsubscribed endpoint (e2 is a cancellation, epBad wants order.paid).
	for _, e := range []string{e1, e2, e3, e4} {
		for _, ep := range []*webhook.Endpoint{w.epNew, w.epLive, w.epB} {
			if _, err := h.st.Webhooks.GetDelivery(w.ctx, id(e, ep.ID)); err == nil {
				t.Fatalf("fan-out of %s wrote a delivery to %s", e, ep.ID)
			}
		}
	}
	if _, err := h.st.Webhooks.GetDelivery(w.ctx, id(e2, w.epBad.ID)); err == nil {
		t.Fatalf("order.cancelled was fanned out to an endpoint subscribed to order.paid only")
	}
	return w
}

// endpoint creates (and, when verify, verifies) an endpoint one second after the previous one.
func (w *hookWorld) endpoint(org string, env ticketing.Environment, u string, desc *string, verify bool, events ...string) *webhook.Endpoint {
	w.t.Helper()
	w.h.clk.Advance(time.Second)
	ep, secret, err := w.svc.CreateEndpoint(w.ctx, webhook.NewEndpoint{OrganizerID: org, Environment: env, URL: u, Description: desc, EnabledEvents: events})
	if err != nil {
		w.t.Fatalf("create endpoint %s: %v", u, err)
	}
	if !strings.HasPrefix(secret, "whsec_") {
		w.t.Fatalf("endpoint secret %q does not start with whsec_", secret)
	}
	w.secrets[ep.ID] = secret
	if verify {
		var res webhook.SendResult
		ep, res, err = w.svc.VerifyEndpoint(w.ctx, ep.ID)
		if err != nil || !res.OK || !ep.Verified {
			w.t.Fatalf("verify %s: %+v %v", u, res, err)
		}
	}
	return ep
}

// orderEvent creates a one-ticket order through the API, settles it with
// simulate-payment (outcome paid or cancelled) and returns the outbox event
// that published and the order id.
func (w *hookWorld) orderEvent(sk, idemKey, tier, outcome string) (string, string) {
	w.t.Helper()
	o := w.h.mustOrder(sk, idemKey, gaBody(tier, 1))
	orderID := o["id"].(string)
	r := w.h.simulate(sk, orderID, outcome)
	wantStatus(w.t, r, http.StatusOK)
	if got := r.json(w.t)["status"]; got != outcome {
		w.t.Fatalf("simulate %s: order %v", outcome, got)
	}
	ids := w.pub.take()
	if len(ids) != 1 {
		w.t.Fatalf("simulate %s of %s published %v, want one event", outcome, orderID, ids)
	}
	return ids[0], orderID
}

// handle gives one deliveries-queue message to svc, as the consumer would.
func (w *hookWorld) handle(svc *webhook.Service, m webhook.Message) {
	w.t.Helper()
	body, err := json.Marshal(m)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := svc.HandleMessage(w.ctx, body); err != nil {
		w.t.Fatalf("handle %s: %v", body, err)
	}
}

// fanout fans an event out one second after the previous step, so that the
// deliveries of each event have their own created_at.
func (w *hookWorld) fanout(svc *webhook.Service, eventID string) {
	w.t.Helper()
	w.h.clk.Advance(time.Second)
	w.handle(svc, webhook.Message{Kind: webhook.KindFanout, EventID: eventID, Due: w.h.clk.Now()})
}

// attempt makes attempt n of generation gen of a delivery, two seconds after
// the previous step (past a redelivery's delay, and in a fresh window of the
// outbound rate limit).
func (w *hookWorld) attempt(id string, gen, n int) *webhook.Delivery {
	w.t.Helper()
	w.h.clk.Advance(2 * time.Second)
	w.handle(w.svc, webhook.Message{Kind: webhook.KindAttempt, DeliveryID: id, Gen: gen, N: n, Due: w.h.clk.Now()})
	d := w.stored(id)
	if d.Attempts != n || d.Gen != gen {
		w.t.Fatalf("attempt %d of generation %d of %s was not made: %+v", n, gen, id, d)
	}
	w.attemptedAt[id] = w.h.clk.Now()
	return d
}

// attemptAll makes the first attempt of every delivery.
func (w *hookWorld) attemptAll() {
	w.t.Helper()
	for _, id := range []string{w.ok1, w.bad1, w.ok2, w.ok3, w.bad3, w.ok4, w.bad4, w.b1} {
		w.attempt(id, 1, 1)
	}
	if got := w.okRC.received(); got != 5 {
		w.t.Fatalf("the 200 receiver got %d order events, want 5 (ok1-ok4, b1)", got)
	}
	if got := w.badRC.received(); got != 3 {
		w.t.Fatalf("the 500 receiver got %d order events, want 3 (bad1, bad3, bad4)", got)
	}
}

func (w *hookWorld) stored(id string) *webhook.Delivery {
	w.t.Helper()
	d, err := w.h.st.Webhooks.GetDelivery(w.ctx, id)
	if err != nil {
		w.t.Fatalf("read delivery %s: %v", id, err)
	}
	return d
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ---- GET /webhook-endpoints ----

type endpointItem struct {
	ID                  string   `json:"id"`
	URL                 string   `json:"url"`
	Status              string   `json:"status"`
	EnabledEvents       []string `json:"enabled_events"`
	Description         *string  `json:"description"`
	ConsecutiveFailures int      `json:"consecutive_failures"`
	LastDeliveryAt      *string  `json:"last_delivery_at"`
	CreatedAt           string   `json:"created_at"`
}

var endpointFields = []string{"id", "url", "status", "enabled_events", "description", "consecutive_failures", "last_delivery_at", "created_at"}

// listEndpoints is GET /v1/webhook-endpoints by secret, checked for the
// contract's fields and for secrets; it returns the items by id.
func (w *hookWorld) listEndpoints(secret string) map[string]endpointItem {
	w.t.Helper()
	r := w.h.get("/v1/webhook-endpoints", secret)
	wantStatus(w.t, r, http.StatusOK)
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		w.t.Errorf("Cache-Control %q, want no-store", cc)
	}
	body := string(r.body)
	if strings.Contains(body, "whsec_") || strings.Contains(body, "v1.") {
		w.t.Errorf("a secret (plaintext whsec_ or sealed v1.) in the endpoint list: %s", body)
	}
	for id, s := range w.secrets {
		stored, err := w.h.st.Webhooks.GetEndpoint(w.ctx, id)
		if err != nil {
			w.t.Fatal(err)
		}
		if strings.Contains(body, s) || strings.Contains(body, stored.Secret) || stored.Secret == "" {
			w.t.Errorf("the secret of %s (plaintext or sealed) is in the endpoint list: %s", id, body)
		}
	}
	var raw struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(r.body, &raw); err != nil || raw.Data == nil {
		w.t.Fatalf("endpoint list %s: %v", body, err)
	}
	want := slices.Sorted(slices.Values(endpointFields))
	for _, it := range raw.Data {
		if keys := slices.Sorted(maps.Keys(it)); !slices.Equal(keys, want) {
			w.t.Errorf("endpoint fields %v, want exactly %v", keys, want)
		}
	}
	var page struct {
		Data []endpointItem `json:"data"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		w.t.Fatal(err)
	}
	out := map[string]endpointItem{}
	for _, e := range page.Data {
		out[e.ID] = e
	}
	if len(out) != len(page.Data) {
		w.t.Errorf("an endpoint is listed twice: %s", body)
	}
	return out
}

func keysOf[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func sortedIDs(ids ...string) []string { return slices.Sorted(slices.Values(ids)) }

func TestWebhookEndpoints_ListTheKeysOwnWithoutSecrets(t *testing.T) {
	w := newHookWorld(t)
	h := w.h

	// Before any attempt: org A's test endpoints only, fields per contract.
	eps := w.listEndpoints(w.skA)
	if got, want := keysOf(eps), sortedIDs(w.epOK.ID, w.epBad.ID, w.epNew.ID); !slices.Equal(got, want) {
		t.Fatalf("org A test endpoints %v, want %v (not the live %s nor org B's %s)", got, want, w.epLive.ID, w.epB.ID)
	}
	ok, bad, unverified := eps[w.epOK.ID], eps[w.epBad.ID], eps[w.epNew.ID]
	if ok.URL != w.okRC.srv.URL+"/hooks" || ok.Status != "active" || ok.Description != nil ||
		!slices.Equal(ok.EnabledEvents, []string{"order.paid", "order.cancelled", "order.refunded"}) ||
		ok.ConsecutiveFailures != 0 || ok.LastDeliveryAt != nil || ok.CreatedAt != rfc3339(w.epOK.CreatedAt) {
		t.Errorf("epOK listed as %+v", ok)
	}
	if bad.URL != w.badRC.srv.URL+"/hooks" || bad.Status != "active" || bad.Description == nil || *bad.Description != "Backup receiver" ||
		!slices.Equal(bad.EnabledEvents, []string{"order.paid"}) || bad.ConsecutiveFailures != 0 || bad.LastDeliveryAt != nil {
		t.Errorf("epBad listed as %+v", bad)
	}
	// An unverified endpoint is listed like any other (verification is not a contract field).
	if unverified.Status != "active" || unverified.Description != nil || len(unverified.EnabledEvents) != 3 {
		t.Errorf("epNew listed as %+v", unverified)
	}
	if !(w.epOK.CreatedAt.Before(w.epBad.CreatedAt) && w.epBad.CreatedAt.Before(w.epNew.CreatedAt)) {
		t.Fatalf("fixture endpoints were not created one after another")
	}

	// After the first attempts: health fields.
	w.attemptAll()
	eps = w.listEndpoints(w.skA)
	ok, bad = eps[w.epOK.ID], eps[w.epBad.ID]
	if ok.ConsecutiveFailures != 0 || ok.LastDeliveryAt == nil {
		t.Errorf("epOK after 4 delivered attempts: %+v", ok)
	} else if at, err := time.Parse(time.RFC3339, *ok.LastDeliveryAt); err != nil ||
		at.Before(w.attemptedAt[w.ok1]) || at.After(w.attemptedAt[w.ok4]) {
		t.Errorf("epOK last_delivery_at %s, want the time of one of its successful attempts (%s to %s)",
			*ok.LastDeliveryAt, rfc3339(w.attemptedAt[w.ok1]), rfc3339(w.attemptedAt[w.ok4]))
	}
	if bad.ConsecutiveFailures != 3 || bad.LastDeliveryAt != nil || bad.Status != "active" {
		t.Errorf("epBad after 3 failed attempts: %+v", bad)
	}

	// Disabled by the organizer: listed as disabled.
	if _, err := w.svc.DisableEndpoint(w.ctx, w.epBad.ID); err != nil {
		t.Fatal(err)
	}
	if bad := w.listEndpoints(w.skA)[w.epBad.ID]; bad.Status != "disabled" {
		t.Errorf("epBad after DisableEndpoint: %+v", bad)
	}

	// The live key sees the live endpoint only; org B its own only.
	live := w.listEndpoints(w.skALive)
	if got := keysOf(live); !slices.Equal(got, []string{w.epLive.ID}) {
		t.Errorf("org A live endpoints %v, want [%s]", got, w.epLive.ID)
	}
	if e := live[w.epLive.ID]; e.URL != "https://hooks.example.com/tix" || e.Description == nil || *e.Description != "Production" || e.Status != "active" {
		t.Errorf("epLive listed as %+v", e)
	}
	if got := keysOf(w.listEndpoints(w.skB)); !slices.Equal(got, []string{w.epB.ID}) {
		t.Errorf("org B endpoints %v, want [%s]", got, w.epB.ID)
	}
	// An organizer without endpoints gets an empty array, not null.
	h.organizer("org_c")
	skC, _ := h.key("org_c", auth.Secret)
	r := h.get("/v1/webhook-endpoints", skC)
	wantStatus(t, r, http.StatusOK)
	if strings.TrimSpace(string(r.body)) != `{"data":[]}` {
		t.Errorf("no endpoints: %s, want {\"data\":[]}", r.body)
	}

	// Keys and parameters.
	pk := h.pkKey(orgA)
	wantError(t, h.get("/v1/webhook-endpoints", pk, fromShop()), http.StatusForbidden, "forbidden", "")
	wantError(t, h.get("/v1/webhook-endpoints", pk), http.StatusForbidden, "forbidden", "")
	noScope, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersList, auth.ScopeOrdersRead, auth.ScopeOrdersRefund))
	wantError(t, h.get("/v1/webhook-endpoints", noScope), http.StatusForbidden, "insufficient_scope", "scope")
	wantError(t, h.get("/v1/webhook-endpoints?expand=secret", w.skA), http.StatusBadRequest, "invalid_request", "expand")
	wantError(t, h.get("/v1/webhook-endpoints?limit=1", w.skA), http.StatusBadRequest, "invalid_request", "limit")
	wantError(t, h.do(http.MethodGet, "/v1/webhook-endpoints", ""), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, h.post("/v1/webhook-endpoints", w.skA, `{"url":"https://example.com/hooks"}`), http.StatusMethodNotAllowed, "method_not_allowed", "")
}
