package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	return testenv.Store(t, clk).Webhooks, clk
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
