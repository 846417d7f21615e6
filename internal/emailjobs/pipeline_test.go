package emailjobs_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/clock"
	"tix/internal/emailjobs"
	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/testenv/lambdaenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// These tests run the email pipeline against DynamoDB Local and fauxqs: orders
// are paid and refunded through the sales service, the webhook fan-out writes
// the jobs, the deliveries queue is consumed as the local runner does, and a
// recording sender stands for the provider.

// recorder is a emailsend.Sender that keeps what it sent; fail, when set, decides
// each call's error.
type recorder struct {
	mu   sync.Mutex
	sent []emailsend.Message
	fail func(n int) error // n counts calls from 1
	n    int
}

func (r *recorder) Send(_ context.Context, m emailsend.Message) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if r.fail != nil {
		if err := r.fail(r.n); err != nil {
			return "", err
		}
	}
	r.sent = append(r.sent, m)
	return "msg-" + string(rune('0'+len(r.sent))), nil
}

func (r *recorder) to(kind string) []emailsend.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []emailsend.Message
	for _, m := range r.sent {
		if m.Headers["X-Tix-Kind"] == kind {
			out = append(out, m)
		}
	}
	return out
}

type harness struct {
	t      *testing.T
	a      *app.App
	clk    *clock.Shifted
	ctx    context.Context
	rec    *recorder
	svc    *emailjobs.Service
	events *published
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	clk := &clock.Shifted{}
	env := lambdaenv.NewWithClock(t, clk)
	a := env.App
	rec := &recorder{}
	svc := app.EnableEmail(a, rec, emailrender.TextRenderer{})
	svc.Settings = emailjobs.Settings{Backoff: []time.Duration{0, 0}, Lease: 30 * time.Second, SweepGrace: 2 * time.Second, SweepBatch: 100}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() {
		_ = a.Queue.Consume(ctx, queue.DeliveriesQueue, func(ctx context.Context, m queue.Message) error {
			return a.HandleDeliveryMessage(ctx, m.Body)
		})
	})
	events := &published{next: a.Webhooks}
	a.Sales.Deps.Events = events
	// The addresses these tests buy for are org_l's own: its test-mode
	// emails may reach them.
	for _, addr := range testRecipients {
		if _, err := a.Store.Emails.AddTestRecipient(context.Background(), tenant.OrganizerID, addr); err != nil {
			t.Fatal(err)
		}
	}
	return &harness{t: t, a: a, clk: clk, ctx: ctx, rec: rec, svc: svc, events: events}
}

var tenant = ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}

// testRecipients are org_l's test recipients in the harness.
var testRecipients = []string{"buyer@example.com", "nobody@example.com", "bounced@example.com"}

func (h *harness) paidOrder(buyer string) *ticketing.Order {
	h.t.Helper()
	tier, qty := "tier_l", 2
	res, err := h.a.Sales.Orders.CreateOrder(h.ctx, ticketing.Caller{Tenant: tenant, KeyID: "key_l"}, webhook.NewSecret(), ticketing.OrderRequest{
		Buyer: &ticketing.BuyerInput{Email: &buyer}, TierID: &tier, Quantity: &qty,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	o, err := h.a.Sales.Orders.Simulate(h.ctx, tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil || o.Status != ticketing.OrderPaid {
		h.t.Fatalf("pay: %v %+v", err, o)
	}
	return o
}

// job waits until the job reaches a final status and returns it.
func (h *harness) job(id string) *emailjobs.Job {
	h.t.Helper()
	var j *emailjobs.Job
	testenv.WaitFor(h.t, 15*time.Second, "email job "+id+" to finish", func() bool {
		var err error
		j, err = h.a.Store.Emails.GetJob(h.ctx, id)
		if errors.Is(err, emailjobs.ErrNotFound) {
			return false
		}
		if err != nil {
			h.t.Fatal(err)
		}
		return j.Status.Final()
	})
	return j
}

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

// A paid order's buyer gets one tickets email, whatever is repeated after:
// the payment confirmed again, the fan-out message and the job's message
// delivered twice, the sweep run.
func TestPaidOrderSendsOneTicketsEmail(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.paidOrder("buyer@example.com")
	j := h.job(o.ID + "/tickets")
	if j.Status != emailjobs.StatusSent || j.ProviderID == "" || j.SentAt == nil || j.Attempts != 1 {
		t.Fatalf("tickets job %+v", j)
	}
	// The payment confirmed a second time, the fan-out of its event and the
	// job's message again, the sweep.
	if _, err := h.a.Sales.Orders.Simulate(h.ctx, tenant, o.ID, ticketing.OutcomePaid); err == nil {
		t.Log("a second confirmation was accepted as a no-op")
	}
	evs := h.orderEvents(o.ID)
	if len(evs) == 0 {
		t.Fatal("no outbox event published for the paid order")
	}
	for _, ev := range evs {
		if err := h.a.Webhooks.Fanout(h.ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.svc.Handle(h.ctx, emailjobs.Message{Kind: emailjobs.KindEmail, JobID: j.ID(), Due: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.Sweep(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.settled()
	got := h.rec.to("tickets")
	if len(got) != 1 {
		t.Fatalf("%d tickets emails, want 1", len(got))
	}
	m := got[0]
	if m.To != "buyer@example.com" || m.FromName != "L" || m.Headers["X-Tix-Order"] != o.ID ||
		!strings.Contains(m.Subject, "Lambda Show") || strings.Count(m.Text, "Ticket ") != 2 {
		t.Errorf("message %+v", m)
	}
}

// orderEvents are the outbox events published for an order so far.
func (h *harness) orderEvents(orderID string) []string {
	h.t.Helper()
	var out []string
	for _, id := range h.events.all() {
		ev, _, err := h.a.Store.Webhooks.GetOrderEvent(h.ctx, id)
		if err != nil {
			h.t.Fatal(err)
		}
		if ev.Order.ID == orderID {
			out = append(out, id)
		}
	}
	return out
}

// published passes events on to the webhook service and keeps their ids.
type published struct {
	next ticketing.EventPublisher
	mu   sync.Mutex
	ids  []string
}

func (p *published) Publish(ctx context.Context, id string) {
	p.mu.Lock()
	p.ids = append(p.ids, id)
	p.mu.Unlock()
	p.next.Publish(ctx, id)
}

func (p *published) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ids...)
}
