package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"tix/internal/auth"
	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
	"tix/internal/webhook/webhooktest"
)

// ---- POST /webhook-endpoints/{id}/replay ----

// replayReceiver is a receiver that can be down (503), answers
// endpoint.verify, and counts every order event it acknowledged by envelope
// id, each verified both ways: Tix-Signature (at the test clock's time) and
// the Standard Webhooks headers with the maintained Go library.
type replayReceiver struct {
	t      *testing.T
	srv    *httptest.Server
	now    func() time.Time
	mu     sync.Mutex
	down   bool
	secret string
	got    map[string]int // envelope id -> acknowledged POSTs
	failed int            // POSTs refused while down
}

func newReplayReceiver(t *testing.T, now func() time.Time) *replayReceiver {
	rc := &replayReceiver{t: t, now: now, got: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *replayReceiver) serve(w http.ResponseWriter, r *http.Request) {
	var env webhooktest.Envelope
	body, ok := webhooktest.Receive(w, r, &env)
	if !ok {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.down {
		rc.failed++
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if err := webhook.Verify(r.Header.Get(webhook.SignatureHeader), body, rc.secret, rc.now(), 0); err != nil {
		rc.t.Errorf("%s: Tix-Signature: %v", env.ID, err)
	}
	wh, err := standardwebhooks.NewWebhookRaw([]byte(rc.secret))
	if err == nil {
		err = wh.VerifyIgnoringTimestamp(body, r.Header) // the timestamp is the test clock's
	}
	if err != nil {
		rc.t.Errorf("%s: Standard Webhooks signature: %v", env.ID, err)
	}
	if id := r.Header.Get(webhook.StandardIDHeader); id != env.ID {
		rc.t.Errorf("webhook-id %q, want the original event id %q", id, env.ID)
	}
	rc.got[env.ID]++
}

func (rc *replayReceiver) setDown(down bool) { rc.mu.Lock(); rc.down = down; rc.mu.Unlock() }

func (rc *replayReceiver) received() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]int{}
	for k, v := range rc.got {
		out[k] = v
	}
	return out
}

// replayQueue points svc at a fresh deliveries queue on fauxqs and returns a
// drain that consumes it as the deliver function does (each message handed
// to svc.HandleMessage at its due time on the test clock, then deleted) until
// nothing is left in it.
func replayQueue(t *testing.T, h *harness, svc *webhook.Service) func() {
	t.Helper()
	ctx := context.Background()
	c, err := queue.Open(ctx, "us-east-1", testenv.SQSEndpoint(t), testenv.UniqueName("tix-replay"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EnsureQueues(ctx); err != nil {
		t.Fatal(err)
	}
	svc.Queue = queue.NewDeliveries(c)
	return func() {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			msgs, err := c.Receive(ctx, queue.DeliveriesQueue, 10, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				var wm webhook.Message
				if err := json.Unmarshal(m.Body, &wm); err != nil {
					t.Fatal(err)
				}
				if d := wm.Due.Sub(h.clk.Now()); d > 0 {
					h.clk.Advance(d)
				}
				if err := svc.HandleMessage(ctx, m.Body); err != nil {
					t.Fatalf("handle %s: %v", m.Body, err)
				}
				if err := c.Delete(ctx, queue.DeliveriesQueue, m.ReceiptHandle); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := c.Depth(ctx, queue.DeliveriesQueue); err == nil && n == 0 && len(msgs) == 0 {
				return
			}
		}
		t.Fatal("the deliveries queue did not drain in 60 s")
	}
}

type replayJSON struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	EndpointID string `json:"endpoint_id"`
	Since      int64  `json:"since"`
	Status     string `json:"status"`
	Queued     int    `json:"queued"`
	Done       int    `json:"done"`
	Created    int64  `json:"created"`
}

func (w *hookWorld) replay(sk, endpointID string, since int64, key string) (response, replayJSON) {
	w.t.Helper()
	opts := []reqOpt{bearer(sk)}
	if key != "" {
		opts = append(opts, idem(key))
	}
	r := w.h.do(http.MethodPost, "/v1/webhook-endpoints/"+endpointID+"/replay", fmt.Sprintf(`{"since": %d}`, since), opts...)
	var out replayJSON
	_ = json.Unmarshal(r.body, &out)
	return r, out
}

func (w *hookWorld) readReplay(sk, endpointID, id string) replayJSON {
	w.t.Helper()
	r := w.h.get("/v1/webhook-endpoints/"+endpointID+"/replays/"+id, sk)
	wantStatus(w.t, r, http.StatusOK)
	var out replayJSON
	if err := json.Unmarshal(r.body, &out); err != nil {
		w.t.Fatal(err)
	}
	return out
}

// replayWorld: org A's endpoint (order.paid and order.refunded only) whose
// receiver took one paid order, then was down for an hour while orders were
// paid (3) and cancelled (2), their first attempts refused and their retries
// still to come. It returns the world, the receiver, the endpoint, the secret
// key, when the outage began and the paid events of the outage.
func replayWorld(t *testing.T) (*hookWorld, *replayReceiver, *webhook.Endpoint, string, time.Time, []string) {
	h := newHarness(t)
	h.seedCatalog()
	svc, pub := h.withWebhooks()
	svc.Replays = h.st.WebhookReplays()
	svc.Settings.ReplayBatch = 2 // several pages
	w := &hookWorld{h: h, t: t, svc: svc, pub: pub, ctx: context.Background(), secrets: map[string]string{}, attemptedAt: map[string]time.Time{}}
	sk, _ := h.key(orgA, auth.Secret)
	rc := newReplayReceiver(t, h.clk.Now)
	ep := w.endpoint(orgA, ticketing.EnvTest, rc.srv.URL+"/hooks", nil, true, ticketing.EventOrderPaid, ticketing.EventOrderRefunded)
	rc.secret = w.secrets[ep.ID]

	before, _ := w.orderEvent(sk, "rp-before", "evt_concert_ga", ticketing.OutcomePaid)
	w.fanout(svc, before)
	w.attempt(webhook.DeliveryID(before, ep.ID), 1, 1)

	rc.setDown(true)
	w.h.clk.Advance(time.Minute)
	outage := w.h.clk.Now().Truncate(time.Second)
	var paid []string
	for i, outcome := range []string{ticketing.OutcomePaid, ticketing.OutcomeCancelled, ticketing.OutcomePaid, ticketing.OutcomeCancelled, ticketing.OutcomePaid} {
		w.h.clk.Advance(10 * time.Minute)
		e, _ := w.orderEvent(sk, "rp-"+strconv.Itoa(i), "evt_concert_ga", outcome)
		w.fanout(svc, e)
		if outcome == ticketing.OutcomePaid {
			paid = append(paid, e)
			w.attempt(webhook.DeliveryID(e, ep.ID), 1, 1) // refused: 503
		}
	}
	w.h.clk.Advance(10 * time.Minute) // an hour after the outage began
	if got := rc.received(); len(got) != 1 || got[before] != 1 {
		t.Fatalf("before the replay the receiver acknowledged %v, want only %s", got, before)
	}
	return w, rc, ep, sk, outage, paid
}

// The proof: a receiver down for an hour, then a replay since the outage.
// Every event it missed and subscribes to arrives exactly once, with its
// original event id, signed both ways; the event before the outage and the
// cancellations (not subscribed) are not sent; the retries the outage left
// scheduled are stale (no second arrival); the replay reads back done with
// its counts, and the event log lists the same events.
func TestWebhookReplay_ReceiverDownAnHourGetsEveryMissedEventOnce(t *testing.T) {
	w, rc, ep, sk, outage, paid := replayWorld(t)
	drain := replayQueue(t, w.h, w.svc)
	rc.setDown(false)

	r, rp := w.replay(sk, ep.ID, outage.Unix(), "replay-outage")
	wantStatus(t, r, http.StatusAccepted)
	if rp.Object != "webhook_replay" || rp.EndpointID != ep.ID || rp.Since != outage.Unix() || rp.Status != "queued" || rp.Queued != 0 {
		t.Fatalf("replay answer %s", r.body)
	}
	drain()

	got := rc.received()
	for _, e := range paid {
		if got[e] != 1 {
			t.Errorf("missed event %s arrived %d times, want once", e, got[e])
		}
	}
	if len(got) != len(paid)+1 {
		t.Errorf("the receiver acknowledged %v, want the event before the outage and the %d paid ones of it", got, len(paid))
	}
	final := w.readReplay(sk, ep.ID, rp.ID)
	if final.Status != "done" || final.Queued != len(paid) || final.Done != len(paid) {
		t.Errorf("replay after the drain: %+v, want done with %d queued and done", final, len(paid))
	}
	// The retries the outage scheduled (attempt 2 of generation 1) arrive now: stale.
	for _, e := range paid {
		w.handle(w.svc, webhook.Message{Kind: webhook.KindAttempt, DeliveryID: webhook.DeliveryID(e, ep.ID), Gen: 1, N: 2, Due: w.h.clk.Now()})
	}
	if again := rc.received(); len(again) != len(got) {
		t.Errorf("stale retries sent events again: %v", again)
	}
	for _, e := range paid {
		if n := rc.received()[e]; n != 1 {
			t.Errorf("after the stale retries %s arrived %d times", e, n)
		}
	}
	logged, _ := eventLog(t, w.h, sk, "type=order.paid&created_after="+rfc3339(outage))
	if len(logged) != len(paid) {
		t.Errorf("event log since the outage lists %v, want the %d paid events %v", logged, len(paid), paid)
	}
	for _, e := range paid {
		if !contains(logged, e) {
			t.Errorf("event log does not list %s", e)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// since is checked (at most 30 days back, not in the future, required); a
// replay of another organizer's endpoint, or read through another endpoint,
// is not found; an Idempotency-Key names one replay: the same request answers
// it again, another since is a conflict.
func TestWebhookReplay_RequestRulesAndIdempotency(t *testing.T) {
	w, _, ep, sk, outage, _ := replayWorld(t)
	skB, _ := w.h.key(orgB, auth.Secret)
	now := w.h.clk.Now()
	for _, c := range []struct {
		name string
		body string
	}{
		{"future", fmt.Sprintf(`{"since": %d}`, now.Add(time.Minute).Unix())},
		{"31 days back", fmt.Sprintf(`{"since": %d}`, now.Add(-31*24*time.Hour).Unix())},
		{"missing", `{}`},
		{"a string", `{"since": "yesterday"}`},
	} {
		r := w.h.do(http.MethodPost, "/v1/webhook-endpoints/"+ep.ID+"/replay", c.body, bearer(sk))
		wantError(t, r, http.StatusBadRequest, "invalid_request", "since")
	}
	r, _ := w.replay(skB, ep.ID, outage.Unix(), "")
	wantError(t, r, http.StatusNotFound, "not_found", "")

	r1, a := w.replay(sk, ep.ID, outage.Unix(), "same-key")
	wantStatus(t, r1, http.StatusAccepted)
	r2, b := w.replay(sk, ep.ID, outage.Unix(), "same-key")
	wantStatus(t, r2, http.StatusAccepted)
	if a.ID == "" || a.ID != b.ID {
		t.Errorf("the same Idempotency-Key made replays %s and %s", a.ID, b.ID)
	}
	r3, _ := w.replay(sk, ep.ID, outage.Unix()+60, "same-key")
	wantError(t, r3, http.StatusConflict, "conflict", "")
	wantError(t, w.h.get("/v1/webhook-endpoints/"+ep.ID+"/replays/"+a.ID, skB), http.StatusNotFound, "not_found", "")
	wantError(t, w.h.get("/v1/webhook-endpoints/we_other/replays/"+a.ID, sk), http.StatusNotFound, "not_found", "")
	if got := w.readReplay(sk, ep.ID, a.ID); got.ID != a.ID || got.Status != "queued" {
		t.Errorf("read back %+v", got)
	}
}

// Concurrency: eight requests with one Idempotency-Key make one replay;
// every page message handled by four consumers at once, and every attempt
// twice at once, still queue each missed event once and count it once:
// queued and done are exact (two copies of one attempt may both POST: delivery
// is at least once, and receivers dedupe on the event id).
func TestWebhookReplay_ConcurrentRequestsPagesAndAttemptsCountOnce(t *testing.T) {
	w, rc, ep, sk, outage, paid := replayWorld(t)
	rc.setDown(false)
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, rp := w.replay(sk, ep.ID, outage.Unix(), "racing-key")
			ids[i] = rp.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("racing requests with one key answered replays %v", ids)
		}
	}
	// Pages: each message handled by four consumers at once.
	cursor := ""
	for range 10 {
		rp, err := w.h.st.WebhookReplays().GetReplay(w.ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if rp.Paged {
			break
		}
		cursor = rp.Cursor
		m, _ := json.Marshal(webhook.Message{Kind: webhook.KindReplay, ReplayID: ids[0], Cursor: cursor, Due: w.h.clk.Now()})
		var pg sync.WaitGroup
		for range 4 {
			pg.Add(1)
			go func() {
				defer pg.Done()
				if err := w.svc.HandleMessage(w.ctx, m); err != nil {
					t.Errorf("page: %v", err)
				}
			}()
		}
		pg.Wait()
	}
	if rp := w.readReplay(sk, ep.ID, ids[0]); rp.Queued != len(paid) || rp.Done != 0 {
		t.Fatalf("after racing pages: %+v, want %d queued, none done", rp, len(paid))
	}
	// Attempts: each one twice at once.
	w.h.clk.Advance(5 * time.Second)
	for _, e := range paid {
		d := w.stored(webhook.DeliveryID(e, ep.ID))
		if d.ReplayID != ids[0] || d.Gen != 2 || d.Status != webhook.DeliveryPending {
			t.Fatalf("delivery of %s after the pages: %+v", e, d)
		}
		m, _ := json.Marshal(webhook.Message{Kind: webhook.KindAttempt, DeliveryID: d.ID, Gen: d.Gen, N: 1, Due: w.h.clk.Now()})
		var ag sync.WaitGroup
		for range 2 {
			ag.Add(1)
			go func() {
				defer ag.Done()
				if err := w.svc.HandleMessage(w.ctx, m); err != nil {
					t.Errorf("attempt: %v", err)
				}
			}()
		}
		ag.Wait()
	}
	rp := w.readReplay(sk, ep.ID, ids[0])
	if rp.Status != "done" || rp.Queued != len(paid) || rp.Done != len(paid) {
		t.Errorf("after racing attempts: %+v, want done, %d queued and done", rp, len(paid))
	}
	for _, e := range paid {
		if n := rc.received()[e]; n < 1 {
			t.Errorf("%s never arrived", e)
		}
	}
}
