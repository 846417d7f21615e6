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

	"tix/internal/clock"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

const hookOrg = "org_hooks"

func newEndpoint(id, org string, env ticketing.Environment, created time.Time) *webhook.Endpoint {
	desc := "primary receiver"
	return &webhook.Endpoint{
		ID: id, OrganizerID: org, Environment: env, URL: "https://example.com/hooks/" + id,
		Status: webhook.EndpointActive, EnabledEvents: []string{ticketing.EventOrderPaid}, Description: &desc,
		Secret: "sealed:" + id, CreatedAt: created, UpdatedAt: created,
	}
}

func hookStore(t *testing.T) (webhook.Store, *clock.Fixed) {
	t.Helper()
	clk := clock.NewFixed(time.Now().UTC())
	return testenv.Store(t, clk), clk
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	t.Parallel()
	ws, clk := hookStore(t)
	ctx := context.Background()
	now := clk.Now()

	e1 := newEndpoint("we_one", hookOrg, ticketing.EnvTest, now)
	e1.OldSecret = "sealed:old"
	rotated := now.Add(-time.Hour)
	e1.SecretRotatedAt = &rotated
	if err := ws.CreateEndpoint(ctx, e1, 5); err != nil {
		t.Fatal(err)
	}
	if e1.Version != 1 {
		t.Fatalf("version after create %d, want 1", e1.Version)
	}
	e2 := newEndpoint("we_two", hookOrg, ticketing.EnvTest, now.Add(time.Millisecond))
	if err := ws.CreateEndpoint(ctx, e2, 5); err != nil {
		t.Fatal(err)
	}
	if err := ws.CreateEndpoint(ctx, newEndpoint("we_live", hookOrg, ticketing.EnvLive, now), 5); err != nil {
		t.Fatal(err)
	}
	if err := ws.CreateEndpoint(ctx, newEndpoint("we_one", hookOrg, ticketing.EnvTest, now), 5); !errors.Is(err, webhook.ErrStateChanged) {
		t.Fatalf("duplicate id: %v, want ErrStateChanged", err)
	}

	got, err := ws.GetEndpoint(ctx, "we_one")
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != e1.URL || got.Secret != "sealed:we_one" || got.OldSecret != "sealed:old" || !got.SecretRotatedAt.Equal(rotated) ||
		got.Status != webhook.EndpointActive || got.Version != 1 || !got.CreatedAt.Equal(now) || !got.UpdatedAt.Equal(now) ||
		*got.Description != "primary receiver" || !slices.Equal(got.EnabledEvents, e1.EnabledEvents) || got.ConsecutiveFailures != 0 {
		t.Fatalf("read back %+v", got)
	}
	if _, err := ws.GetEndpoint(ctx, "we_missing"); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("missing endpoint: %v", err)
	}
	if _, err := ws.GetEndpoint(ctx, "we bad/id"); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("malformed id: %v", err)
	}

	list, err := ws.ListEndpoints(ctx, hookOrg, ticketing.EnvTest)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "we_one" || list[1].ID != "we_two" {
		t.Fatalf("list %v, want we_one, we_two (oldest first, test environment only)", ids(list))
	}

	// Health counters change without the version; UpdateEndpoint keeps them.
	failAt := now.Add(time.Minute).Truncate(time.Millisecond)
	if _, err := ws.EndpointFailed(ctx, "we_one", failAt); err != nil {
		t.Fatal(err)
	}
	after, err := ws.EndpointFailed(ctx, "we_one", failAt.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if after.ConsecutiveFailures != 2 || !after.FailingSince.Equal(failAt) || !after.LastAttemptAt.Equal(failAt.Add(time.Minute)) || after.Version != 1 {
		t.Fatalf("after two failures %+v", after)
	}
	e1.URL = "https://example.com/moved"
	e1.Verified = false
	e1.OldSecret, e1.SecretRotatedAt = "", nil
	if err := ws.UpdateEndpoint(ctx, e1, false); err != nil {
		t.Fatal(err)
	}
	if e1.Version != 2 || e1.ConsecutiveFailures != 2 {
		t.Fatalf("caller's endpoint after update: version %d, failures %d; want 2 and 2", e1.Version, e1.ConsecutiveFailures)
	}
	got, _ = ws.GetEndpoint(ctx, "we_one")
	if got.URL != "https://example.com/moved" || got.ConsecutiveFailures != 2 || got.FailingSince == nil || got.OldSecret != "" || got.SecretRotatedAt != nil || got.Version != 2 {
		t.Fatalf("after update %+v", got)
	}
	stale := *got
	stale.Version = 1
	if err := ws.UpdateEndpoint(ctx, &stale, false); !errors.Is(err, webhook.ErrStateChanged) {
		t.Fatalf("stale update: %v, want ErrStateChanged", err)
	}
	missing := newEndpoint("we_nope", hookOrg, ticketing.EnvTest, now)
	missing.Version = 1
	if err := ws.UpdateEndpoint(ctx, missing, false); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("update of a missing endpoint: %v, want ErrNotFound", err)
	}
	if err := ws.UpdateEndpoint(ctx, got, true); err != nil {
		t.Fatal(err)
	}
	got, _ = ws.GetEndpoint(ctx, "we_one")
	if got.ConsecutiveFailures != 0 || got.FailingSince != nil || got.LastAttemptAt == nil || got.Version != 3 {
		t.Fatalf("after reset %+v", got)
	}

	// Success resets the streak.
	if _, err := ws.EndpointFailed(ctx, "we_two", failAt); err != nil {
		t.Fatal(err)
	}
	okAt := failAt.Add(time.Hour)
	if err := ws.EndpointSucceeded(ctx, "we_two", okAt); err != nil {
		t.Fatal(err)
	}
	got, _ = ws.GetEndpoint(ctx, "we_two")
	if got.ConsecutiveFailures != 0 || got.FailingSince != nil || !got.LastDeliveryAt.Equal(okAt) || !got.LastAttemptAt.Equal(okAt) {
		t.Fatalf("after success %+v", got)
	}
	if _, err := ws.EndpointFailed(ctx, "we_missing", failAt); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("failure of a missing endpoint: %v", err)
	}

	// Disable once.
	disAt := okAt.Add(time.Minute)
	done, err := ws.DisableEndpoint(ctx, "we_two", "failing for 5 days", disAt)
	if err != nil || !done {
		t.Fatalf("disable: %v %v", done, err)
	}
	done, err = ws.DisableEndpoint(ctx, "we_two", "again", disAt.Add(time.Second))
	if err != nil || done {
		t.Fatalf("second disable: %v %v, want false and no error", done, err)
	}
	if _, err := ws.DisableEndpoint(ctx, "we_missing", "x", disAt); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("disable of a missing endpoint: %v", err)
	}
	got, _ = ws.GetEndpoint(ctx, "we_two")
	if got.Status != webhook.EndpointDisabled || !got.DisabledAt.Equal(disAt) || got.DisabledReason != "failing for 5 days" ||
		!got.UpdatedAt.Equal(disAt) || got.Version != 2 || !got.LastDeliveryAt.Equal(okAt) {
		t.Fatalf("after disable %+v", got)
	}
	// Re-enabling through UpdateEndpoint clears the disabled fields.
	got.Status, got.DisabledAt, got.DisabledReason = webhook.EndpointActive, nil, ""
	got.UpdatedAt = disAt.Add(time.Hour)
	if err := ws.UpdateEndpoint(ctx, got, true); err != nil {
		t.Fatal(err)
	}
	got, _ = ws.GetEndpoint(ctx, "we_two")
	if got.Status != webhook.EndpointActive || got.DisabledAt != nil || got.DisabledReason != "" || !got.UpdatedAt.Equal(disAt.Add(time.Hour)) {
		t.Fatalf("after re-enable %+v", got)
	}

	// Delete, conditional on the version.
	stale = *got
	stale.Version--
	if err := ws.DeleteEndpoint(ctx, &stale); !errors.Is(err, webhook.ErrStateChanged) {
		t.Fatalf("stale delete: %v", err)
	}
	if err := ws.DeleteEndpoint(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.GetEndpoint(ctx, "we_two"); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("deleted endpoint: %v", err)
	}
	if err := ws.DeleteEndpoint(ctx, got); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func ids(es []*webhook.Endpoint) []string {
	var r []string
	for _, e := range es {
		r = append(r, e.ID)
	}
	return r
}

// 8 creates at once with room for 3: exactly 3 endpoints exist; a delete frees a slot.
func TestWebhookEndpointLimit(t *testing.T) {
	t.Parallel()
	ws, clk := hookStore(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, full := 0, 0
	var other []error
	for i := range 8 {
		wg.Go(func() {
			err := ws.CreateEndpoint(ctx, newEndpoint(fmt.Sprintf("we_c%d", i), hookOrg, ticketing.EnvTest, clk.Now()), 3)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, webhook.ErrTooManyEndpoints):
				full++
			default:
				other = append(other, err)
			}
		})
	}
	wg.Wait()
	if ok != 3 || full != 5 || len(other) > 0 {
		t.Fatalf("%d created, %d refused, other errors %v; want 3 and 5", ok, full, other)
	}
	list, err := ws.ListEndpoints(ctx, hookOrg, ticketing.EnvTest)
	if err != nil || len(list) != 3 {
		t.Fatalf("listed %d (%v), want 3", len(list), err)
	}
	if err := ws.CreateEndpoint(ctx, newEndpoint("we_more", hookOrg, ticketing.EnvTest, clk.Now()), 3); !errors.Is(err, webhook.ErrTooManyEndpoints) {
		t.Fatalf("fourth endpoint: %v", err)
	}
	// Another environment has its own count.
	if err := ws.CreateEndpoint(ctx, newEndpoint("we_live", hookOrg, ticketing.EnvLive, clk.Now()), 3); err != nil {
		t.Fatal(err)
	}
	if err := ws.DeleteEndpoint(ctx, list[0]); err != nil {
		t.Fatal(err)
	}
	if err := ws.CreateEndpoint(ctx, newEndpoint("we_more", hookOrg, ticketing.EnvTest, clk.Now()), 3); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	if err := ws.CreateEndpoint(ctx, newEndpoint("we_most", hookOrg, ticketing.EnvTest, clk.Now()), 3); !errors.Is(err, webhook.ErrTooManyEndpoints) {
		t.Fatalf("full again: %v", err)
	}
}

// 20 failed attempts recorded at once count 20; the streak starts at one of them.
func TestWebhookEndpointFailedConcurrently(t *testing.T) {
	t.Parallel()
	ws, clk := hookStore(t)
	ctx := context.Background()
	base := clk.Now().Truncate(time.Millisecond)
	if err := ws.CreateEndpoint(ctx, newEndpoint("we_f", hookOrg, ticketing.EnvTest, base), 10); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			_, errs[i] = ws.EndpointFailed(ctx, "we_f", base.Add(time.Duration(i+1)*time.Second))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got, err := ws.GetEndpoint(ctx, "we_f")
	if err != nil {
		t.Fatal(err)
	}
	if got.ConsecutiveFailures != 20 || got.FailingSince == nil || got.FailingSince.Before(base) || got.FailingSince.After(base.Add(20*time.Second)) {
		t.Fatalf("after 20 concurrent failures %+v", got)
	}
	first := *got.FailingSince
	after, err := ws.EndpointFailed(ctx, "we_f", base.Add(time.Hour))
	if err != nil || after.ConsecutiveFailures != 21 || !after.FailingSince.Equal(first) {
		t.Fatalf("21st failure: %+v %v", after, err)
	}
	if err := ws.EndpointSucceeded(ctx, "we_f", base.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, _ = ws.GetEndpoint(ctx, "we_f")
	if got.ConsecutiveFailures != 0 || got.FailingSince != nil {
		t.Fatalf("after success %+v", got)
	}
}

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
	return &hookEnv{salesEnv: env, ws: env.st, known: map[string]bool{}}
}

// paidEvent pays a new order through the sales service and returns its order.paid outbox event.
func (h *hookEnv) paidEvent(t *testing.T) *ticketing.OrderEvent {
	t.Helper()
	ctx := context.Background()
	h.n++
	res, err := h.sales.CreateOrder(ctx, h.c, fmt.Sprintf("hook-%d", h.n), gaRequest(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.sales.Simulate(ctx, h.c.Tenant, res.Order.ID, ticketing.OutcomePaid); err != nil {
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
	list := func(q webhook.DeliveryQuery) []string {
		t.Helper()
		q.OrganizerID, q.Environment = salesOrg, ticketing.EnvTest
		var got []string
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatal("paging does not end")
			}
			page, err := h.ws.ListDeliveries(ctx, q)
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

// 20 requests at once through an outbound window of 5: exactly 5 go.
func TestWebhookTakeOutbound(t *testing.T) {
	t.Parallel()
	ws, clk := hookStore(t)
	ctx := context.Background()
	now := clk.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	var errs []error
	for range 20 {
		wg.Go(func() {
			ok, err := ws.TakeOutbound(ctx, "example.com", 5, now)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				taken++
			}
		})
	}
	wg.Wait()
	if taken != 5 || len(errs) > 0 {
		t.Fatalf("%d taken (errors %v), want 5", taken, errs)
	}
	if ok, err := ws.TakeOutbound(ctx, "other.example", 5, now); !ok || err != nil {
		t.Fatalf("another key: %v %v", ok, err)
	}
	if ok, err := ws.TakeOutbound(ctx, "example.com", 5, now.Add(time.Second)); !ok || err != nil {
		t.Fatalf("next window: %v %v", ok, err)
	}
}
