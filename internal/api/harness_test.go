package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/api/openapitest"
	"tix/internal/apidocs"
	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/config"
	"tix/internal/payment"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
	"tix/internal/waitroom"
	"tix/internal/webhook"
)

// harness is the real router and middleware over a fresh DynamoDB Local table;
// every response it sees is checked against the OpenAPI document.
type harness struct {
	t       *testing.T
	st      *store.Store
	clk     *clock.Fixed
	srv     *api.Server
	handler http.Handler
	oas     *openapitest.Validator
	sales   *ticketing.Sales
	timers  *recordedTimers
	pay     *payment.Test
	payDown *atomic.Bool // the test provider fails while true
	offers  *ticketingtest.Offers
	queue   *waitroom.Service
}

// recordedTimers keeps what the sales path schedules; tests run them through
// Sales.HandleTimer (the SQS round trip is tested in internal/queue and app).
type recordedTimers struct {
	mu  sync.Mutex
	all []ticketing.Timer
}

func (r *recordedTimers) Schedule(_ context.Context, t ticketing.Timer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, t)
	return nil
}

func (r *recordedTimers) take() []ticketing.Timer {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := r.all
	r.all = nil
	return all
}

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// newHarness marks the test parallel: each harness owns its table, clock,
// timers and payment provider, so the tests that build one (once, first thing)
// overlap their DynamoDB Local round trips.
func newHarness(t *testing.T) *harness {
	t.Helper()
	t.Parallel()
	clk := clock.NewFixed(t0)
	st := testenv.Store(t, clk)
	timers := &recordedTimers{}
	payDown := &atomic.Bool{}
	pay := payment.NewTest(payment.TestOptions{RefundSettleAfter: 30 * time.Second,
		Fail: func(ticketing.PaymentRequest) error {
			if payDown.Load() {
				return errors.New("acquirer unavailable")
			}
			return nil
		}})
	settings := ticketing.DefaultSalesSettings
	settings.TokenSecret = testenv.CursorSecret
	sales := ticketing.NewSales(st.Sales(), &ticketing.SalesDeps{
		Timers: timers, Clock: clk, Settings: settings,
		Payments: func(_ context.Context, _ string, env ticketing.Environment) (ticketing.PaymentProvider, error) {
			if env == ticketing.EnvTest {
				return pay, nil
			}
			return nil, errors.New("no live provider in tests")
		},
	})
	box, err := webhook.NewAESBox(config.LocalKeyring)
	if err != nil {
		t.Fatal(err)
	}
	ticketKeys := &ticketing.TicketKeys{Store: st.TicketKeys(), Box: box, Clock: clk}
	srv := &api.Server{
		Keys: st.Keys, Health: st, Clock: clk,
		Catalog: &ticketing.Catalog{Store: st.Catalog, Clock: clk, Maps: &ticketing.SeatingMaps{}},
		Sales:   sales,
		Limits:  api.DefaultLimits,
		Docs:    apidocs.Redoc(),
	}
	srv.EnableDoor(ticketKeys, &ticketing.CheckIns{Store: st.Tickets(), Keys: ticketKeys, Catalog: st.Catalog, Clock: clk})
	sales.Orders.Door = st.Tickets()
	offers := &ticketingtest.Offers{}
	srv.EnableTransfers(&ticketing.Transfers{Store: st.Transfers(), Door: st.Tickets(), Orders: sales.Orders, Offers: offers,
		AcceptURL: func(id, token string) string {
			return "http://127.0.0.1:8080/v1/transfers/" + id + "/accept?token=" + token
		}})
	queue := waitroom.New(st.WaitingRoom(), clk, waitroom.Settings{Secret: testenv.CursorSecret})
	srv.EnableWaitingRoom(queue, api.QueueLookups{Holds: st.Holds, Tiers: st.Catalog})
	return &harness{t: t, st: st, clk: clk, srv: srv, handler: srv.Handler(), oas: openapitest.New(t),
		sales: sales, timers: timers, pay: pay, payDown: payDown, offers: offers, queue: queue}
}

func (h *harness) organizer(id string) {
	h.t.Helper()
	if err := h.st.Organizers.CreateOrganizer(context.Background(), ticketing.Organizer{ID: id, Name: id, Verified: true, CreatedAt: t0}); err != nil {
		h.t.Fatal(err)
	}
}

type keyOpt func(*auth.Key)

func withScopes(s ...string) keyOpt          { return func(k *auth.Key) { k.Scopes = s } }
func withOrigins(o ...string) keyOpt         { return func(k *auth.Key) { k.AllowedOrigins = o } }
func withIPs(ips ...string) keyOpt           { return func(k *auth.Key) { k.AllowedIPs = ips } }
func withExpiry(at time.Time) keyOpt         { return func(k *auth.Key) { k.ExpiresAt = &at } }
func withEnv(e ticketing.Environment) keyOpt { return func(k *auth.Key) { k.Environment = e } }

// key creates a key for org and returns its secret.
func (h *harness) key(org string, typ auth.KeyType, opts ...keyOpt) (string, *auth.Key) {
	h.t.Helper()
	k := &auth.Key{ID: auth.NewKeyID(), OrganizerID: org, Type: typ, Environment: ticketing.EnvTest,
		Scopes: auth.DefaultScopes(typ), CreatedAt: t0}
	for _, o := range opts {
		o(k)
	}
	secret := auth.NewSecret(typ, k.Environment)
	k.Last4 = secret[len(secret)-4:]
	if err := h.st.Keys.CreateKey(context.Background(), *k, auth.Hash(secret)); err != nil {
		h.t.Fatal(err)
	}
	return secret, k
}

type reqOpt func(*http.Request)

func header(k, v string) reqOpt   { return func(r *http.Request) { r.Header.Set(k, v) } }
func remoteAddr(a string) reqOpt  { return func(r *http.Request) { r.RemoteAddr = a } }
func bearer(secret string) reqOpt { return header("Authorization", "Bearer "+secret) }

type response struct {
	*http.Response
	body []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// errorCode returns error.code and error.param of an envelope.
func (r response) errorCode(t *testing.T) (string, string) {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("not an error envelope: %s", r.body)
	}
	code, _ := e["code"].(string)
	param, _ := e["param"].(string)
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("error envelope without message: %s", r.body)
	}
	if doc, _ := e["doc_url"].(string); doc != "/v1/docs/errors#"+code {
		t.Errorf("error envelope's doc_url %q, want /v1/docs/errors#%s: %s", doc, code, r.body)
	}
	return code, param
}

func (h *harness) do(method, target string, body string, opts ...reqOpt) response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://127.0.0.1:8080"+target, rd)
	req.RemoteAddr = "192.0.2.10:40000"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	h.oas.CheckResponse(h.t, req, res, b)
	isDocs := strings.HasPrefix(target, "/v1/docs") && res.StatusCode == http.StatusOK                            // HTML and its script
	isBankOK := strings.HasPrefix(target, "/v1/payment-notifications/") && res.StatusCode == http.StatusOK        // "OK", for the bank
	isPage := strings.Contains(target, "/accept") && res.Header.Get("Content-Type") == "text/html; charset=utf-8" // a transfer's page
	isPage = isPage || strings.HasPrefix(target, "/v1/queue/") && strings.Contains(target, "?pk=")                // the hosted queue page
	if res.Header.Get("Content-Type") != "application/json" && res.StatusCode != http.StatusNoContent && !isDocs && !isBankOK && !isPage {
		h.t.Errorf("%s %s: Content-Type %q, want application/json", method, target, res.Header.Get("Content-Type"))
	}
	if !strings.HasSuffix(strings.SplitN(target, "?", 2)[0], "/health") && res.Header.Get("Tix-Request-Id") == "" {
		h.t.Errorf("%s %s: no Tix-Request-Id", method, target)
	}
	return response{Response: res, body: b}
}

func (h *harness) get(target, secret string, opts ...reqOpt) response {
	h.t.Helper()
	return h.do(http.MethodGet, target, "", append([]reqOpt{bearer(secret)}, opts...)...)
}

func wantStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("status %d, want %d; body: %s", r.StatusCode, status, r.body)
	}
}

func wantError(t *testing.T, r response, status int, code, param string) {
	t.Helper()
	wantStatus(t, r, status)
	gotCode, gotParam := r.errorCode(t)
	if gotCode != code || gotParam != param {
		t.Fatalf("error %q param %q, want %q param %q; body: %s", gotCode, gotParam, code, param, r.body)
	}
}
