package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/app/sending"
	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/payment"
	"tix/internal/payment/tbanksim"
	"tix/internal/queue"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// liveStack is the whole service on the local stack (DynamoDB Local, fauxqs,
// the HTTP API on a real listener, the timers and deliveries consumers) with
// one organizer connected to a terminal of the T-Bank simulator, which posts
// its notifications to the API like the bank: live payments end to end.
type liveStack struct {
	t        *testing.T
	app      *app.App
	sim      *tbanksim.Server
	api      string // base URL of /v1
	simURL   string // the simulator's base URL
	sk       string // sk_live of the organizer
	hooks    *published
	terminal string
	password string
}

const (
	liveOrg   = "org_live"
	liveEvent = "evt_live"
	liveTier  = "tier_live"
)

// liveOptions shorten the durations a test waits for.
type liveOptions struct {
	orderTTL, checkGrace, refundCheck, bankTimeout time.Duration
	capacity                                       int
	mail                                           bool // email on (SMTP to MailDev): owner alerts are written
}

func newLiveStack(t *testing.T, o liveOptions) *liveStack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sim := tbanksim.New(tbanksim.Options{NotifyRetry: 50 * time.Millisecond, RefundAfter: 200 * time.Millisecond,
		HoldFor: 300 * time.Millisecond, Sweep: 100 * time.Millisecond})
	simSrv := httptest.NewServer(sim)
	t.Cleanup(func() { simSrv.Close(); sim.Close() })
	handler := http.NotFoundHandler()
	var mu sync.RWMutex
	apiSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.RLock()
		h := handler
		mu.RUnlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(apiSrv.Close)
	st := testenv.Store(t, nil)
	vars := map[string]string{
		"TIX_CURSOR_SECRET": string(testenv.CursorSecret), "TIX_TABLE": st.TableName(),
		"TIX_DYNAMODB_ENDPOINT": testenv.DynamoEndpoint(t), "TIX_SQS_ENDPOINT": testenv.SQSEndpoint(t),
		"TIX_QUEUE_PREFIX": testenv.UniqueName("tix-live"), "TIX_WEBHOOK_KEYRING": config.LocalKeyring,
		"TIX_TBANK_API_URL": simSrv.URL, "TIX_PUBLIC_URL": apiSrv.URL, "TIX_WEBHOOK_SCHEDULE": "0s,1s",
		"TIX_LIVE_ORDER_TTL": o.orderTTL.String(), "TIX_PAYMENT_CHECK_GRACE": o.checkGrace.String(),
		"TIX_REFUND_CHECK_INTERVAL": o.refundCheck.String(), "TIX_TBANK_TIMEOUT": o.bankTimeout.String(),
		"TIX_PAYMENT_ACCOUNT_CACHE_TTL": "0s", "TIX_LOG_LEVEL": "warn",
	}
	if o.mail {
		vars["TIX_MAIL_SENDER"], vars["TIX_SMTP_ADDR"], vars["TIX_MAIL_FROM"] = "smtp", testenv.SMTPEndpoint(t), "tickets@tix.localhost"
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := sending.New(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	app.AllowLoopbackWebhooks(a.Webhooks, cfg)
	if _, err := a.Queue.EnsureQueues(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	handler = a.Server.Handler()
	mu.Unlock()
	s := &liveStack{t: t, app: a, sim: sim, api: apiSrv.URL + "/v1", simURL: simSrv.URL, terminal: "TixLiveE2E", password: "e2e-terminal-password"}
	s.seed(ctx, o.capacity)
	s.hooks = &published{inner: a.Sales.Deps.Events, st: a.Store}
	a.Sales.Deps.Events = s.hooks
	consume(ctx, t, a, queue.TimersQueue, a.HandleTimerMessage)
	consume(ctx, t, a, queue.DeliveriesQueue, a.HandleDeliveryMessage)
	return s
}

// consume runs a queue's consumer, as the functions do on AWS, until the test ends.
func consume(ctx context.Context, t *testing.T, a *app.App, name string, handle func(context.Context, []byte) error) {
	go func() {
		err := a.Queue.Consume(ctx, name, func(ctx context.Context, m queue.Message) error { return handle(ctx, m.Body) })
		if err != nil && ctx.Err() == nil {
			t.Errorf("%s consumer: %v", name, err)
		}
	}()
}

// seed creates the organizer, connects its terminal (password sealed under
// the keyring), a live secret key and an event with one general-admission tier.
func (s *liveStack) seed(ctx context.Context, capacity int) {
	t, st := s.t, s.app.Store
	now := time.Now().UTC().Truncate(time.Second)
	if err := st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: liveOrg, Name: "Live Org", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	s.sim.AddTerminal(s.terminal, s.password)
	acct := ticketing.PaymentAccount{OrganizerID: liveOrg, Acquirer: ticketing.AcquirerTBank, TerminalKey: s.terminal,
		Taxation: "usn_income", VAT: "none", ConnectedAt: now, CheckedAt: now}
	sealed, err := s.app.Webhooks.Box.Seal(s.password, payment.PasswordAAD(&acct))
	if err != nil {
		t.Fatal(err)
	}
	acct.SealedPassword = sealed
	if err := st.Payments.PutPaymentAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	s.sk = auth.NewSecret(auth.Secret, ticketing.EnvLive)
	if err := st.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: liveOrg, Type: auth.Secret, Environment: ticketing.EnvLive,
		Scopes: auth.AllScopes, Last4: s.sk[len(s.sk)-4:], CreatedAt: now}, auth.Hash(s.sk)); err != nil {
		t.Fatal(err)
	}
	ev := &ticketing.Event{ID: liveEvent, OrganizerID: liveOrg, Ref: "live", Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "Live Night", City: "Kazan", Venue: "Hall", StartsAt: now.Add(48 * time.Hour), EndsAt: now.Add(50 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{{ID: liveTier, Name: "Dance floor", Price: 150000, Capacity: capacity, PersonsIncluded: 1, Color: "#000000"}},
	}
	if err := st.Catalog.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
}

// call sends a request to the API with the live key.
func (s *liveStack) call(method, path, body string, hdr ...string) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.api+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.sk)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &m)
	return res.StatusCode, m
}

// order creates a live order of qty tickets with an Idempotency-Key.
func (s *liveStack) order(key string, qty int) (int, map[string]any) {
	s.t.Helper()
	body := `{"tier_id":"` + liveTier + `","quantity":` + strconv.Itoa(qty) + `,"buyer":{"email":"buyer@example.com"}}`
	return s.call("POST", "/orders", body, "Idempotency-Key", key)
}

// status reads an order's status.
func (s *liveStack) status(id string) string {
	s.t.Helper()
	code, m := s.call("GET", "/orders/"+id, "")
	if code != http.StatusOK {
		s.t.Fatalf("GET /orders/%s: %d %v", id, code, m)
	}
	st, _ := m["status"].(string)
	return st
}

// waitStatus waits until the order has status want.
func (s *liveStack) waitStatus(id, want string, within time.Duration) map[string]any {
	s.t.Helper()
	var last map[string]any
	testenv.WaitFor(s.t, within, "order "+id+" "+want, func() bool {
		_, last = s.call("GET", "/orders/"+id, "")
		return last["status"] == want
	})
	return last
}

// published records the outbox events the sales path publishes (what the
// webhooks deliver: the envelope is built from the stored event), read back
// from the table as committed, before the fan-out consumes them.
type published struct {
	inner ticketing.EventPublisher
	st    *store.Store
	mu    sync.Mutex
	evs   []*ticketing.OrderEvent
	errs  []error
}

func (p *published) Publish(ctx context.Context, id string) {
	ev, _, err := p.st.Webhooks.GetOrderEvent(ctx, id)
	p.mu.Lock()
	if err != nil {
		p.errs = append(p.errs, err)
	} else {
		p.evs = append(p.evs, ev)
	}
	p.mu.Unlock()
	p.inner.Publish(ctx, id)
}

// events returns the published events of type typ for order id.
func (p *published) events(t *testing.T, typ, id string) []*ticketing.OrderEvent {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) > 0 {
		t.Fatalf("reading published events: %v", p.errs)
	}
	var out []*ticketing.OrderEvent
	for _, ev := range p.evs {
		if ev.Type == typ && ev.Order.ID == id {
			out = append(out, ev)
		}
	}
	return out
}

// waitEvents waits until n events of type typ were published for order id
// (the publication follows the committed change) and returns them.
func (s *liveStack) waitEvents(typ, id string, n int) []*ticketing.OrderEvent {
	s.t.Helper()
	testenv.WaitFor(s.t, 5*time.Second, typ+" published for "+id, func() bool { return len(s.hooks.events(s.t, typ, id)) >= n })
	return s.hooks.events(s.t, typ, id)
}
