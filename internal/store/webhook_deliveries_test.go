package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// hookEnv is the sales environment (real orders write the outbox events) plus
// the webhook port over the same table.
type hookEnv struct {
	*salesEnv
	ws    webhook.Store
	known map[string]bool
	n     int
}

func newHookEnv(t *testing.T) *hookEnv {
	t.Helper()
	env := newSalesEnv(t, 1000)
	return &hookEnv{salesEnv: env, ws: env.st.Webhooks, known: map[string]bool{}}
}

// paidEvent pays a new order through the sales service and returns its order.paid outbox event.
func (h *hookEnv) paidEvent(t *testing.T) *ticketing.OrderEvent {
	t.Helper()
	ctx := context.Background()
	h.n++
	res, err := h.sales.Orders.CreateOrder(ctx, h.c, fmt.Sprintf("hook-%d", h.n), gaRequest(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.sales.Orders.Simulate(ctx, h.c.Tenant, res.Order.ID, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	all, err := h.ws.UndispatchedEvents(ctx, h.clk.Now().Add(time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var fresh []string
	for _, id := range all {
		if !h.known[id] {
			fresh = append(fresh, id)
			h.known[id] = true
		}
	}
	if len(fresh) != 1 {
		t.Fatalf("new undispatched events %v, want exactly one", fresh)
	}
	ev, dispatched, err := h.ws.GetOrderEvent(ctx, fresh[0])
	if err != nil || dispatched || ev.Type != ticketing.EventOrderPaid || ev.Order.ID != res.Order.ID {
		t.Fatalf("event %s: %+v dispatched=%v %v", fresh[0], ev, dispatched, err)
	}
	return ev
}

func newDelivery(ev *ticketing.OrderEvent, endpointID string, created time.Time) *webhook.Delivery {
	due := created.Add(time.Minute)
	return &webhook.Delivery{
		ID: webhook.DeliveryID(ev.ID, endpointID), OrganizerID: ev.OrganizerID, Environment: ev.Environment,
		EndpointID: endpointID, EventID: ev.ID, EventType: ev.Type, Status: webhook.DeliveryPending,
		MaxAttempts: 8, Gen: 1, NextAttemptAt: created, CreatedAt: created, RecheckAt: &due, Log: []webhook.Attempt{},
	}
}

func TestWebhookDispatchAndAttempt(t *testing.T) {
	t.Parallel()
	h := newHookEnv(t)
	ctx := context.Background()
	t0 := h.clk.Now() // whole second
	ev1 := h.paidEvent(t)
	h.clk.Advance(1500 * time.Millisecond) // the second event's RFC3339Nano key has a fraction
	ev2 := h.paidEvent(t)

	undispatched := func(at time.Time) []string {
		t.Helper()
		got, err := h.ws.UndispatchedEvents(ctx, at, 100)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, c := range []struct {
		at   time.Time
		want []string
	}{
		{t0.Add(-time.Nanosecond), nil},
		{t0, []string{ev1.ID}},
		{t0.Add(time.Second), []string{ev1.ID}},
		{t0.Add(1499 * time.Millisecond), []string{ev1.ID}},
		{t0.Add(1500 * time.Millisecond), []string{ev1.ID, ev2.ID}},
		{t0.Add(time.Hour), []string{ev1.ID, ev2.ID}},
	} {
		if got := undispatched(c.at); !slices.Equal(got, c.want) {
			t.Errorf("undispatched at %s: %v, want %v", c.at.Format(time.RFC3339Nano), got, c.want)
		}
	}
	if got, _ := h.ws.UndispatchedEvents(ctx, t0.Add(time.Hour), 1); !slices.Equal(got, []string{ev1.ID}) {
		t.Errorf("limit 1: %v, want the oldest", got)
	}

	ep := newEndpoint("we_a", salesOrg, ticketing.EnvTest, t0)
	if err := h.ws.CreateEndpoint(ctx, ep, 5); err != nil {
		t.Fatal(err)
	}
	now := h.clk.Now()
	ds := []*webhook.Delivery{newDelivery(ev1, "we_a", now), newDelivery(ev1, "we_gone", now)}
	if err := h.ws.Dispatch(ctx, ev1.ID, ds); err != nil {
		t.Fatal(err)
	}
	if ds[0].Version != 1 || ds[1].Version != 1 {
		t.Fatalf("versions after dispatch %d %d, want 1", ds[0].Version, ds[1].Version)
	}
	if _, dispatched, err := h.ws.GetOrderEvent(ctx, ev1.ID); err != nil || !dispatched {
		t.Fatalf("event after dispatch: dispatched=%v %v", dispatched, err)
	}
	if got := undispatched(t0.Add(time.Hour)); !slices.Equal(got, []string{ev2.ID}) {
		t.Fatalf("undispatched after dispatch %v, want only %s", got, ev2.ID)
	}
	again := []*webhook.Delivery{newDelivery(ev1, "we_a", now), newDelivery(ev1, "we_gone", now)}
	if err := h.ws.Dispatch(ctx, ev1.ID, again); !errors.Is(err, webhook.ErrStateChanged) {
		t.Fatalf("second dispatch: %v, want ErrStateChanged", err)
	}
	if err := h.ws.Dispatch(ctx, ev1.ID, nil); !errors.Is(err, webhook.ErrStateChanged) {
		t.Fatalf("second empty dispatch: %v, want ErrStateChanged", err)
	}
	if err := h.ws.Dispatch(ctx, "evt_missing", nil); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("dispatch of a missing event: %v, want ErrNotFound", err)
	}
	// An event no endpoint wants is dispatched with no deliveries.
	if err := h.ws.Dispatch(ctx, ev2.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := undispatched(t0.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("undispatched after both %v", got)
	}
	page, err := h.ws.ListDeliveries(ctx, webhook.DeliveryQuery{OrganizerID: salesOrg, Environment: ticketing.EnvTest, Limit: 100})
	if err != nil || len(page.Deliveries) != 2 || page.HasMore {
		t.Fatalf("deliveries listed %d (%v), want 2", len(page.Deliveries), err)
	}

	// LoadAttempt: delivery, event, endpoint in one read; a deleted endpoint is nil.
	d, gotEv, gotEp, err := h.ws.LoadAttempt(ctx, ds[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != ds[0].ID || d.Version != 1 || d.Status != webhook.DeliveryPending || !d.RecheckAt.Equal(*ds[0].RecheckAt) ||
		gotEv.ID != ev1.ID || gotEv.Order.ID != ev1.Order.ID || gotEp == nil || gotEp.ID != "we_a" || gotEp.Secret != ep.Secret {
		t.Fatalf("LoadAttempt: %+v %+v %+v", d, gotEv, gotEp)
	}
	d, gotEv, gotEp, err = h.ws.LoadAttempt(ctx, ds[1].ID)
	if err != nil || d.EndpointID != "we_gone" || gotEv == nil || gotEp != nil {
		t.Fatalf("LoadAttempt without endpoint: %+v %+v %+v %v", d, gotEv, gotEp, err)
	}
	for _, id := range []string{"whd_nope", "not-an-id", webhook.DeliveryID(ev2.ID, "we_a"), webhook.DeliveryID("evt_missing", "we_a")} {
		if _, _, _, err := h.ws.LoadAttempt(ctx, id); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("LoadAttempt(%s): %v, want ErrNotFound", id, err)
		}
		if _, err := h.ws.GetDelivery(ctx, id); !errors.Is(err, webhook.ErrNotFound) {
			t.Errorf("GetDelivery(%s): %v, want ErrNotFound", id, err)
		}
	}
}

// Two attempts save the same read of a delivery at once: exactly one wins.
// A pending delivery is in the due index by RecheckAt; a finished one is not.
func TestWebhookSaveDeliveryAndDueIndex(t *testing.T) {
	t.Parallel()
	h := newHookEnv(t)
	ctx := context.Background()
	ev := h.paidEvent(t)
	now := h.clk.Now()
	d0 := newDelivery(ev, "we_a", now)
	if err := h.ws.Dispatch(ctx, ev.ID, []*webhook.Delivery{d0, newDelivery(ev, "we_b", now)}); err != nil {
		t.Fatal(err)
	}
	due := *d0.RecheckAt
	overdue := func(at time.Time) []string {
		t.Helper()
		got, err := h.ws.OverdueDeliveries(ctx, at, 100)
		if err != nil {
			t.Fatal(err)
		}
		var r []string
		for _, d := range got {
			r = append(r, d.ID)
		}
		slices.Sort(r)
		return r
	}
	both := []string{d0.ID, webhook.DeliveryID(ev.ID, "we_b")}
	slices.Sort(both)
	if got := overdue(due.Add(-time.Nanosecond)); len(got) != 0 {
		t.Fatalf("overdue before due: %v", got)
	}
	if got := overdue(due); !slices.Equal(got, both) {
		t.Fatalf("overdue at due: %v, want %v", got, both)
	}
	if got, _ := h.ws.OverdueDeliveries(ctx, due, 1); len(got) != 1 {
		t.Fatalf("limit 1 gave %d", len(got))
	}

	a, err := h.ws.GetDelivery(ctx, d0.ID)
	if err != nil {
		t.Fatal(err)
	}
	b := *a
	a.Attempts, b.Attempts = 1, 1
	code := 200
	a.Status, a.LastStatusCode, a.DeliveredAt, a.RecheckAt = webhook.DeliveryDelivered, &code, &now, nil
	a.Log = append(a.Log, webhook.Attempt{Gen: 1, N: 1, At: now, StatusCode: 200, DurationMS: 12})
	later := due.Add(5 * time.Minute)
	b.RecheckAt = &later
	var wg sync.WaitGroup
	var errA, errB error
	wg.Go(func() { errA = h.ws.SaveDelivery(ctx, a) })
	wg.Go(func() { errB = h.ws.SaveDelivery(ctx, &b) })
	wg.Wait()
	winner := a
	switch {
	case errA == nil && errors.Is(errB, webhook.ErrStateChanged):
		if b.Version != 1 {
			t.Fatalf("loser's version moved to %d", b.Version)
		}
	case errB == nil && errors.Is(errA, webhook.ErrStateChanged):
		winner = &b
	default:
		t.Fatalf("concurrent saves: %v and %v, want exactly one ErrStateChanged", errA, errB)
	}
	if winner.Version != 2 {
		t.Fatalf("winner's version %d, want 2", winner.Version)
	}
	got, err := h.ws.GetDelivery(ctx, d0.ID)
	if err != nil || got.Version != 2 || got.Status != winner.Status {
		t.Fatalf("stored %+v %v", got, err)
	}
	// Make it delivered (whichever won) and check it left the due index.
	if got.Status == webhook.DeliveryPending {
		if got.RecheckAt == nil || !got.RecheckAt.Equal(later) {
			t.Fatalf("pending winner's recheck %v, want %v", got.RecheckAt, later)
		}
		got.Status, got.RecheckAt, got.DeliveredAt = webhook.DeliveryDelivered, nil, &now
		got.Log = append(got.Log, webhook.Attempt{Gen: 1, N: 1, At: now, StatusCode: 200})
		if err := h.ws.SaveDelivery(ctx, got); err != nil || got.Version != 3 {
			t.Fatalf("save delivered: %v (version %d)", err, got.Version)
		}
	}
	got, _ = h.ws.GetDelivery(ctx, d0.ID)
	if got.Status != webhook.DeliveryDelivered || got.RecheckAt != nil || len(got.Log) != 1 || got.Log[0].StatusCode != 200 {
		t.Fatalf("delivered %+v", got)
	}
	if r := overdue(later.Add(time.Hour)); !slices.Equal(r, []string{webhook.DeliveryID(ev.ID, "we_b")}) {
		t.Fatalf("overdue after delivery: %v, want only we_b's", r)
	}
	stale := *got
	stale.Version = 1
	if err := h.ws.SaveDelivery(ctx, &stale); !errors.Is(err, webhook.ErrStateChanged) {
		t.Fatalf("stale save: %v", err)
	}
	ghost := newDelivery(ev, "we_ghost", now)
	ghost.Version = 1
	if err := h.ws.SaveDelivery(ctx, ghost); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("save of a missing delivery: %v", err)
	}
	// Back to pending (a redelivery): in the due index again.
	got.Status, got.Gen, got.RecheckAt = webhook.DeliveryPending, 2, &later
	if err := h.ws.SaveDelivery(ctx, got); err != nil {
		t.Fatal(err)
	}
	if r := overdue(later); !slices.Equal(r, both) {
		t.Fatalf("overdue after redelivery: %v, want %v", r, both)
	}
	pend, err := h.ws.PendingDeliveries(ctx, "we_a", 10)
	if err != nil || len(pend) != 1 || pend[0].ID != d0.ID {
		t.Fatalf("pending of we_a: %v %v", pend, err)
	}
}

// Deliveries page newest first with a signed cursor bound to the query.
func TestWebhookListDeliveries(t *testing.T) {
	t.Parallel()
	h := newHookEnv(t)
	ctx := context.Background()
	base := h.clk.Now()
	var all []*webhook.Delivery // creation order
	for i := range 5 {
		ev := h.paidEvent(t)
		da := newDelivery(ev, "we_a", base.Add(time.Duration(2*i)*time.Millisecond))
		db := newDelivery(ev, "we_b", base.Add(time.Duration(2*i+1)*time.Millisecond))
		if err := h.ws.Dispatch(ctx, ev.ID, []*webhook.Delivery{da, db}); err != nil {
			t.Fatal(err)
		}
		all = append(all, da, db)
	}
	// we_a's first and third deliveries are delivered.
	for _, i := range []int{0, 4} {
		d := all[i]
		d.Status, d.RecheckAt = webhook.DeliveryDelivered, nil
		if err := h.ws.SaveDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	list := func(q webhook.DeliveryQuery) []string { return h.listAll(t, q, 20) }
	want := func(keep func(i int, d *webhook.Delivery) bool) []string {
		var r []string
		for i := len(all) - 1; i >= 0; i-- {
			if keep(i, all[i]) {
				r = append(r, all[i].ID)
			}
		}
		return r
	}
	cases := []struct {
		name string
		q    webhook.DeliveryQuery
		keep func(int, *webhook.Delivery) bool
	}{
		{"all", webhook.DeliveryQuery{Limit: 3}, func(int, *webhook.Delivery) bool { return true }},
		{"all in one page", webhook.DeliveryQuery{Limit: 100}, func(int, *webhook.Delivery) bool { return true }},
		{"exact pages", webhook.DeliveryQuery{Limit: 5}, func(int, *webhook.Delivery) bool { return true }},
		{"endpoint", webhook.DeliveryQuery{Limit: 2, EndpointID: "we_a"}, func(_ int, d *webhook.Delivery) bool { return d.EndpointID == "we_a" }},
		{"pending", webhook.DeliveryQuery{Limit: 3, Status: webhook.DeliveryPending}, func(i int, _ *webhook.Delivery) bool { return i != 0 && i != 4 }},
		{"endpoint delivered", webhook.DeliveryQuery{Limit: 1, EndpointID: "we_a", Status: webhook.DeliveryDelivered}, func(i int, _ *webhook.Delivery) bool { return i == 0 || i == 4 }},
		{"failed", webhook.DeliveryQuery{Limit: 3, Status: webhook.DeliveryFailed}, func(int, *webhook.Delivery) bool { return false }},
		{"unknown endpoint", webhook.DeliveryQuery{Limit: 3, EndpointID: "we_zzz"}, func(int, *webhook.Delivery) bool { return false }},
	}
	for _, c := range cases {
		if got, w := list(c.q), want(c.keep); !slices.Equal(got, w) {
			t.Errorf("%s: %v, want %v", c.name, got, w)
		}
	}

	// Another organizer sees nothing, even naming the endpoint.
	for _, q := range []webhook.DeliveryQuery{
		{OrganizerID: "org_other", Environment: ticketing.EnvTest, Limit: 10},
		{OrganizerID: "org_other", Environment: ticketing.EnvTest, Limit: 10, EndpointID: "we_a"},
		{OrganizerID: salesOrg, Environment: ticketing.EnvLive, Limit: 10, EndpointID: "we_a"},
	} {
		page, err := h.ws.ListDeliveries(ctx, q)
		if err != nil || len(page.Deliveries) != 0 {
			t.Errorf("%+v: %d deliveries (%v), want none", q, len(page.Deliveries), err)
		}
	}

	// Cursors: only for the query that issued them, and tamper-evident.
	first, err := h.ws.ListDeliveries(ctx, webhook.DeliveryQuery{OrganizerID: salesOrg, Environment: ticketing.EnvTest, Limit: 2})
	if err != nil || !first.HasMore {
		t.Fatalf("first page: %+v %v", first, err)
	}
	p, sig, _ := strings.Cut(first.NextCursor, ".")
	tampered := p[:len(p)-2] + "AA." + sig
	for name, q := range map[string]webhook.DeliveryQuery{
		"other filter": {OrganizerID: salesOrg, Environment: ticketing.EnvTest, Limit: 2, Status: webhook.DeliveryPending, Cursor: first.NextCursor},
		"other org":    {OrganizerID: "org_other", Environment: ticketing.EnvTest, Limit: 2, Cursor: first.NextCursor},
		"tampered":     {OrganizerID: salesOrg, Environment: ticketing.EnvTest, Limit: 2, Cursor: tampered},
		"garbage":      {OrganizerID: salesOrg, Environment: ticketing.EnvTest, Limit: 2, Cursor: "garbage"},
	} {
		_, err := h.ws.ListDeliveries(ctx, q)
		var te *ticketing.Error
		if !ticketing.IsCode(err, ticketing.CodeInvalidRequest) || !errors.As(err, &te) || te.Param != "cursor" {
			t.Errorf("%s cursor: %v, want invalid_request on cursor", name, err)
		}
	}
}

// listAll walks every page of the test organizer's delivery listing for q
// (at most maxPages), checking each page's bounds, and returns the ids.
func (h *hookEnv) listAll(t *testing.T, q webhook.DeliveryQuery, maxPages int) []string {
	t.Helper()
	q.OrganizerID, q.Environment = salesOrg, ticketing.EnvTest
	var got []string
	for pages := 0; ; pages++ {
		if pages > maxPages {
			t.Fatal("paging does not end")
		}
		page, err := h.ws.ListDeliveries(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Deliveries) > q.Limit || page.HasMore != (page.NextCursor != "") {
			t.Fatalf("page of %d (limit %d), has_more %v cursor %q", len(page.Deliveries), q.Limit, page.HasMore, page.NextCursor)
		}
		for _, d := range page.Deliveries {
			got = append(got, d.ID)
		}
		if !page.HasMore {
			return got
		}
		q.Cursor = page.NextCursor
	}
}
