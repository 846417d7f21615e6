package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tix/internal/app"
	"tix/internal/app/sending"
	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/queue"
	"tix/internal/ticketing"
	"tix/internal/webhook"
	"tix/internal/webhook/webhooktest"
	"tix/scripts/loadstack"
)

// The on-sale's organizer, event, tier and storefront origin.
const (
	orgID   = "org_onsale"
	eventID = "evt_onsale"
	tierID  = "tier_ga"
	// seatsID is a seated event of the same organizer, for the holds.
	seatsID = "evt_onsale_seats"
	// promoCode is a limited code every order uses, with as many uses as
	// the tier has tickets: the worst case for its counter.
	promoCode = "ONSALE"
	origin    = "https://shop.example"
)

// sale is the wired service behind its HTTP server, the two keys, the
// webhook receiver and the deliveries consumers.
type sale struct {
	a       *app.App
	base    string // http://127.0.0.1:port/v1
	pk, sk  string
	rc      *receiver
	closers []func()
}

// newSale wires the service over its own table and queues on DynamoDB
// (through the meter at endpoint) and fauxqs, seeds a published event with
// capacity tickets in one tier, starts the receiver, its verified webhook
// endpoint, the deliveries consumers and the HTTP server.
func newSale(ctx context.Context, endpoint string, capacity, seats int, rates map[string]float64) (*sale, error) {
	s := &sale{}
	a, err := newApp(ctx, endpoint, rates)
	if err != nil {
		return nil, err
	}
	s.a = a
	fmt.Printf("==> Creating table and queues %s (DynamoDB through the metering proxy)\n", a.Config.Table)
	if _, err := a.Store.EnsureTable(ctx); err != nil {
		return nil, fmt.Errorf("%w (is DynamoDB Local running? `make onsale-model` starts it)", err)
	}
	s.closers = append(s.closers, func() { _ = a.Store.DeleteTable(context.Background()) })
	if _, err := a.Queue.EnsureQueues(ctx); err != nil {
		s.close()
		return nil, fmt.Errorf("%w (is fauxqs running? `make onsale-model` starts it)", err)
	}
	if err := s.seed(ctx, capacity, seats); err != nil {
		s.close()
		return nil, err
	}
	if err := s.serve(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// newApp is the service over a table and queues of its own. The
// publishable key's budgets are the production ones the rates need
// (KeyBudget: their counters spread over as many shards as in production
// at those budgets); the other budgets are lifted (every whole-number rate
// or per-IP limit set very high): each buyer comes from its own address,
// and simulate-payment (secret key) stands in for the bank's notification,
// which no key budget counts.
func newApp(ctx context.Context, endpoint string, rates map[string]float64) (*app.App, error) {
	name := fmt.Sprintf("tix-onsale-%d", time.Now().UnixNano())
	env := map[string]string{
		"TIX_TABLE": name, "TIX_QUEUE_PREFIX": name, "TIX_DYNAMODB_ENDPOINT": endpoint,
		"TIX_SQS_ENDPOINT":  loadstack.EnvOr("TIX_SQS_ENDPOINT", "http://127.0.0.1:4566"),
		"TIX_CURSOR_SECRET": "onsale-model-cursor-secret", "TIX_WEBHOOK_KEYRING": config.LocalKeyring,
		"TIX_LOG_LEVEL": "error",
	}
	for _, v := range config.Vars {
		if _, err := strconv.Atoi(v.Default); err == nil && liftable(v.Name) {
			env[v.Name] = "1000000"
		}
	}
	env["TIX_RATE_PK_READS"] = strconv.Itoa(KeyBudget(rates[phaseRead]))
	env["TIX_RATE_PK_WRITES"] = strconv.Itoa(KeyBudget(rates[phaseOrder] + rates[phaseHold]))
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	app.Logger(cfg)
	a, err := sending.New(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	app.AllowLoopbackWebhooks(a.Webhooks, cfg) // the receiver is on this machine
	return a, nil
}

// liftable: budgets and rate limits (TIX_RATE_*, TIX_*_IP_*, webhook
// rates, any *BUDGET* or *CEILING*).
func liftable(name string) bool {
	for _, part := range []string{"RATE", "_IP_", "BUDGET", "CEILING"} {
		if strings.Contains(name, part) {
			return true
		}
	}
	return false
}

// seed writes the organizer, a secret key and the storefront's publishable
// key (origin allowed), the published event and a seated one for the holds.
func (s *sale) seed(ctx context.Context, capacity, seats int) error {
	now := time.Now().UTC()
	st := s.a.Store
	if err := st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: orgID, Name: "On-sale", CreatedAt: now}); err != nil {
		return err
	}
	s.sk = auth.NewSecret(auth.Secret, ticketing.EnvTest)
	if err := st.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: orgID, Type: auth.Secret,
		Environment: ticketing.EnvTest, Scopes: auth.AllScopes, CreatedAt: now}, auth.Hash(s.sk)); err != nil {
		return err
	}
	s.pk = auth.NewSecret(auth.Publishable, ticketing.EnvTest)
	if err := st.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: orgID, Type: auth.Publishable,
		Environment: ticketing.EnvTest, Scopes: auth.DefaultScopes(auth.Publishable), AllowedOrigins: []string{origin},
		CreatedAt: now}, auth.Hash(s.pk)); err != nil {
		return err
	}
	ev := &ticketing.Event{ID: eventID, OrganizerID: orgID, Ref: "onsale", Status: ticketing.EventPublished,
		Kind: ticketing.KindSingle, Title: "On-sale", City: "Moscow", Venue: "Arena", StartsAt: now.Add(720 * time.Hour),
		EndsAt: now.Add(723 * time.Hour), Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers:  []ticketing.Tier{{ID: tierID, Name: "GA", Price: 150000, Capacity: capacity, PersonsIncluded: 1}},
		Promos: []ticketing.Promo{{Code: promoCode, Type: ticketing.PromoPercent, Value: 10, MaxUses: capacity}}}
	if err := st.Catalog.PutEvent(ctx, ev); err != nil {
		return err
	}
	if err := s.protectQueue(ctx, ev); err != nil {
		return err
	}
	return st.Catalog.PutEvent(ctx, seatedEvent(ev, seats))
}

// seatedEvent is a copy of ev under seatsID with one seated zone of n seats
// (seat_0 ... seat_<n-1>).
func seatedEvent(ev *ticketing.Event, n int) *ticketing.Event {
	e := *ev
	e.ID, e.Ref, e.Title, e.HasSeating, e.SeatBlocks = seatsID, "onsale-seats", "On-sale (seated)", true, ticketing.SeatBlocks
	e.Tiers = []ticketing.Tier{{ID: "tier_seats", Name: "Seats", Price: 300000, Capacity: n, PersonsIncluded: 1, ZoneID: "zone_s", Seated: true}}
	e.Zones = []ticketing.ZoneSummary{{ID: "zone_s", Name: "Stalls", Type: ticketing.ZoneSeated, PrimaryTierID: "tier_seats", SeatCount: n}}
	seats := make([]ticketing.Seat, n)
	for i := range seats {
		row, num := fmt.Sprintf("R%d", i/50+1), i%50+1
		seats[i] = ticketing.Seat{ID: fmt.Sprintf("seat_%d", i), Label: fmt.Sprintf("%s-%d", row, num), Row: &row, Number: &num, X: float64(num), Y: float64(i / 50)}
	}
	e.Seating = &ticketing.Seating{LayoutID: "lay_s", Zones: []ticketing.Zone{{ID: "zone_s", Name: "Stalls",
		Type: ticketing.ZoneSeated, PrimaryTierID: "tier_seats", Seats: seats}}}
	return &e
}

// serve starts the receiver and its verified endpoint, four deliveries
// consumers (as the local runner runs) and the API on a loopback port.
func (s *sale) serve(ctx context.Context) error {
	s.rc = &receiver{paid: map[string]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	rsrv := &http.Server{Handler: s.rc}
	go func() { _ = rsrv.Serve(ln) }()
	s.closers = append(s.closers, func() { _ = rsrv.Close() })
	ep, _, err := s.a.Webhooks.CreateEndpoint(ctx, webhook.NewEndpoint{OrganizerID: orgID, Environment: ticketing.EnvTest,
		URL: "http://" + ln.Addr().String() + "/hooks"})
	if err != nil {
		return err
	}
	if _, res, err := s.a.Webhooks.VerifyEndpoint(ctx, ep.ID); err != nil || !res.OK {
		return fmt.Errorf("verify the receiver: %+v %v", res, err)
	}
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_ = s.a.Queue.Consume(cctx, queue.DeliveriesQueue, func(ctx context.Context, m queue.Message) error {
				return s.a.HandleDeliveryMessage(ctx, m.Body)
			})
		})
	}
	s.closers = append(s.closers, func() { stop(); wg.Wait() })
	aln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	asrv := &http.Server{Handler: s.a.Server.Handler()}
	go func() { _ = asrv.Serve(aln) }()
	s.closers = append(s.closers, func() { _ = asrv.Close() })
	s.base = "http://" + aln.Addr().String() + "/v1"
	return nil
}

func (s *sale) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// buyer is one simulated buyer: its own loopback source address (its
// client IP to the API) and HTTP client.
type buyer struct {
	n      int
	client *http.Client
}

func newBuyer(n int) *buyer {
	ip := net.IPv4(127, byte(1+n/65536%254), byte(n/256%256), byte(1+n%254))
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 5 * time.Second}
	return &buyer{n: n, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}}
}

// each runs op for buyers 0..n-1, conc at a time; the first error stops it.
func (s *sale) each(n, conc int, op func(*buyer) error) error {
	var next atomic.Int64
	var first error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := op(newBuyer(i)); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					next.Store(int64(n))
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// call sends one request and decodes a JSON answer of status want into out.
func (s *sale) call(b *buyer, method, path, key string, body any, want int, out any, hdr map[string]string) error {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := b.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// read is one availability read from the storefront.
func (s *sale) read(b *buyer) error {
	return s.call(b, http.MethodGet, "/events/"+eventID+"/availability", s.pk, nil, http.StatusOK, nil, map[string]string{"Origin": origin})
}

// hold holds the holdQuantity best available seats of the seated event
// from the storefront.
func (s *sale) hold(b *buyer) error {
	body := map[string]any{"event_id": seatsID, "best_available": map[string]any{"tier_id": "tier_seats", "quantity": holdQuantity}}
	return s.call(b, http.MethodPost, "/seat-holds", s.pk, body, http.StatusOK, nil,
		map[string]string{"Origin": origin, "Idempotency-Key": fmt.Sprintf("onsale-hold-%d", b.n)})
}

// buy creates an order of one ticket with the limited promo code from the
// storefront and pays it (the
// simulated payment is the test mode's stand-in for the bank's notification).
func (s *sale) buy(b *buyer) error {
	var o struct {
		ID string `json:"id"`
	}
	body := map[string]any{"event_id": eventID, "tier_id": tierID, "quantity": 1, "promo_code": promoCode,
		"buyer": map[string]string{"email": fmt.Sprintf("buyer%d@example.com", b.n)}}
	err := s.call(b, http.MethodPost, "/orders", s.pk, body, http.StatusCreated, &o,
		map[string]string{"Origin": origin, "Idempotency-Key": fmt.Sprintf("onsale-%d", b.n)})
	if err != nil {
		return err
	}
	return s.call(b, http.MethodPost, "/orders/"+o.ID+"/simulate-payment", s.sk, map[string]string{"outcome": "paid"}, http.StatusOK, nil, nil)
}

// receiver is the organizer's webhook endpoint: it answers the verification
// and counts the orders whose order.paid arrived.
type receiver struct {
	mu   sync.Mutex
	paid map[string]bool
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var env webhooktest.Envelope
	if _, ok := webhooktest.Receive(w, r, &env); !ok {
		return
	}
	if env.Type == "order.paid" {
		rc.mu.Lock()
		rc.paid[env.Data.Order.ID] = true
		rc.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// waitFor waits until n orders' order.paid arrived.
func (rc *receiver) waitFor(n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		rc.mu.Lock()
		got := len(rc.paid)
		rc.mu.Unlock()
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d order.paid webhooks arrived within %s", got, n, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
