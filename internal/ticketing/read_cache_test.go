package ticketing

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/clock"
)

// Concurrent misses of one key load once; a failed load is not kept; a full
// cache serves without keeping; a nil cache loads every time.
func TestReadCache_LoadsOncePerTTLAndKeepsNoFailure(t *testing.T) {
	clk := clock.NewFixed(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	rc := NewReadCache(clk, time.Second)
	key := viewKey{by: "id", name: "evt_1", tenant: Tenant{OrganizerID: "org_a", Environment: EnvTest}}
	var loads atomic.Int32
	release := make(chan struct{})
	load := func() (*EventView, error) {
		loads.Add(1)
		<-release
		return &EventView{Event: &Event{ID: "evt_1"}}, nil
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := rc.get(context.Background(), key, load); err != nil || v.Event.ID != "evt_1" {
				t.Errorf("get: %v %v", v, err)
			}
		}()
	}
	time.Sleep(10 * time.Millisecond) // let the goroutines queue behind the first load
	close(release)
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Fatalf("20 concurrent reads loaded %d times, want 1", n)
	}
	clk.Advance(time.Second)
	_, _ = rc.get(context.Background(), key, load)
	if n := loads.Load(); n != 2 {
		t.Fatalf("a read at the TTL loaded %d times in all, want 2", n)
	}

	fails := 0
	failing := func() (*EventView, error) { fails++; return nil, errors.New("down") }
	other := viewKey{by: "id", name: "evt_2", tenant: key.tenant}
	for range 2 {
		if _, err := rc.get(context.Background(), other, failing); err == nil {
			t.Fatal("failed load returned no error")
		}
	}
	if fails != 2 {
		t.Fatalf("failed loads %d, want 2 (a failure is not cached)", fails)
	}

	rc.max = 1
	third := viewKey{by: "id", name: "evt_3", tenant: key.tenant}
	for range 2 {
		_, _ = rc.get(context.Background(), third, load)
	}
	if n := loads.Load(); n != 4 || len(rc.entries) != 1 {
		t.Fatalf("full cache: %d loads, %d entries; want 4 loads and 1 entry", n, len(rc.entries))
	}

	var none *ReadCache
	for range 2 {
		_, _ = none.get(context.Background(), key, load)
	}
	if n := loads.Load(); n != 6 || none.TTL() != 0 || NewReadCache(clk, 0) != nil {
		t.Fatalf("nil cache: %d loads in all, want 6", n)
	}
}

// Invalidate drops a tenant's event views by id, by slug and per occurrence,
// a view loading while the stock changed included, and nobody else's.
func TestReadCache_InvalidateDropsTheEventsViewsOnly(t *testing.T) {
	clk := clock.NewFixed(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	rc := NewReadCache(clk, time.Hour)
	a := Tenant{OrganizerID: "org_a", Environment: EnvTest}
	live := Tenant{OrganizerID: "org_a", Environment: EnvLive}
	loads := map[viewKey]int{}
	read := func(k viewKey, during func()) {
		t.Helper()
		if _, err := rc.get(context.Background(), k, func() (*EventView, error) {
			loads[k]++
			if during != nil {
				during()
			}
			id := k.name
			if k.by == "slug" {
				id = "evt_1"
			}
			return &EventView{Event: &Event{ID: id}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	byID, bySlug := viewKey{by: "id", name: "evt_1", tenant: a}, viewKey{by: "slug", name: "rock-night", tenant: a}
	occ := viewKey{by: "id", name: "evt_1", tenant: a, occurrence: "occ_1"}
	liveID, other := viewKey{by: "id", name: "evt_1", tenant: live}, viewKey{by: "id", name: "evt_2", tenant: a}
	all := []viewKey{byID, bySlug, occ, liveID, other}
	for range 2 {
		for _, k := range all {
			read(k, nil)
		}
	}
	rc.Invalidate(a, "evt_1")
	for _, k := range all {
		read(k, nil)
	}
	for k, want := range map[viewKey]int{byID: 2, bySlug: 2, occ: 2, liveID: 1, other: 1} {
		if loads[k] != want {
			t.Errorf("%+v loaded %d times, want %d", k, loads[k], want)
		}
	}
	// A sale committed while a view loads: that view is not served again.
	read(other, func() { rc.Invalidate(a, "evt_2") }) // cached: no load, no invalidation
	rc.Invalidate(a, "evt_2")
	read(other, func() { rc.Invalidate(a, "evt_2") })
	read(other, nil)
	if loads[other] != 3 { // the first, after the change, after the change during the load
		t.Errorf("a view loaded across a stock change was served again: %d loads, want 3", loads[other])
	}
	var nilCache *ReadCache
	nilCache.Invalidate(a, "evt_1") // no panic
}
