package api_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/auth"
)

// boundedWalk follows GET target's cursors to the end and returns the ids
// and the number of pages; pages may be short (even empty) with has_more.
func boundedWalk(t *testing.T, h *harness, target, secret string) ([]string, int) {
	t.Helper()
	var all []string
	cursor := ""
	for pages := 1; ; pages++ {
		if pages > 50 {
			t.Fatalf("%s: more than 50 pages", target)
		}
		u := target
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		r := h.get(u, secret)
		wantStatus(t, r, 200)
		body := r.json(t)
		all = append(all, ids(t, r)...)
		if body["has_more"] != true {
			if body["next_cursor"] != nil {
				t.Fatalf("%s: last page has next_cursor %v", target, body["next_cursor"])
			}
			return all, pages
		}
		next, ok := body["next_cursor"].(string)
		if !ok || next == "" {
			t.Fatalf("%s: has_more without next_cursor: %s", target, r.body)
		}
		cursor = next
	}
}

// GET /events whose filters match nothing examines at most the list budget
// per request: a page comes back empty with has_more and a cursor, following
// the cursors ends, and a match among many non-matching events is found once.
func TestListEvents_FiltersMatchingNothingAreBoundedPerRequest(t *testing.T) {
	h := newHarness(t)
	h.organizer(orgA)
	ctx := context.Background()
	for i := range 40 {
		e := baseEvent(orgA, fmt.Sprintf("evt_many%02d", i), fmt.Sprintf("Show %d", i), day(5+i))
		e.City = "Moscow"
		if i == 25 {
			e.City = "Kazan"
		}
		if err := h.st.Catalog.PutEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	const budget = 8
	h.st.SetListBudget(budget)
	sk, _ := h.key(orgA, auth.Secret)

	r := h.get("/v1/events?city=Nowhere&limit=5", sk)
	wantStatus(t, r, 200)
	body := r.json(t)
	if len(ids(t, r)) != 0 || body["has_more"] != true || body["next_cursor"] == nil {
		t.Fatalf("first page over 40 non-matching events with a budget of %d: %s", budget, r.body)
	}
	got, pages := boundedWalk(t, h, "/v1/events?city=Nowhere&limit=5", sk)
	if len(got) != 0 || pages < 40/budget {
		t.Fatalf("city=Nowhere: %v in %d pages, want nothing in at least %d", got, pages, 40/budget)
	}
	got, _ = boundedWalk(t, h, "/v1/events?city=kazan&limit=5", sk)
	if fmt.Sprint(got) != "[evt_many25]" {
		t.Fatalf("city=kazan walked %v, want [evt_many25]", got)
	}
	// A page whose items all match is full: the budget never shortens it.
	r = h.get("/v1/events?limit=20", sk)
	if n := len(ids(t, r)); n != 20 || r.json(t)["has_more"] != true {
		t.Fatalf("unfiltered limit=20 with a budget of %d: %d events", budget, n)
	}
}

// GET /webhook-deliveries with another organizer's endpoint_id reads none of
// its deliveries; a status that matches nothing is bounded like /events.
func TestWebhookDeliveries_ForeignEndpointAndEmptyFiltersAreBounded(t *testing.T) {
	w := newHookWorld(t)
	h := w.h
	w.attemptAll()
	var mu sync.Mutex
	queries := map[string]int{}
	h.st.OnCapacity(func(op string, _ *types.ConsumedCapacity) { mu.Lock(); queries[op]++; mu.Unlock() })
	count := func(op string) int { mu.Lock(); defer mu.Unlock(); return queries[op] }

	p := w.deliveries(w.skB, "endpoint_id="+w.epOK.ID)
	if len(p.Data) != 0 || p.HasMore {
		t.Fatalf("org B by org A's endpoint: %+v", p)
	}
	w.deliveries(w.skALive, "endpoint_id="+w.epOK.ID)
	if n := count("ListDeliveries"); n != 0 {
		t.Fatalf("listing by a foreign endpoint_id queried the deliveries %d times, want 0", n)
	}
	w.wantIDs("own endpoint", w.deliveries(w.skA, "endpoint_id="+w.epOK.ID).Data, w.ok1, w.ok2, w.ok3, w.ok4)

	// The listing merges 64 write-shards and the unsharded partition: a page
	// reads each at least once, and beyond that no more than the budget.
	const partitions = 65
	h.st.SetListBudget(2)
	before := count("ListDeliveries")
	got, pages := boundedWalk(t, h, "/v1/webhook-deliveries?status=skipped&limit=1", w.skA)
	if n := count("ListDeliveries") - before; len(got) != 0 || n > pages*(partitions+2) {
		t.Fatalf("status=skipped: %v in %d pages of %d queries, want nothing in at most %d queries a page", got, pages, n, partitions+2)
	}
	got, _ = boundedWalk(t, h, "/v1/webhook-deliveries?status=failed&limit=1", w.skA)
	if fmt.Sprint(got) != fmt.Sprint([]string{w.bad4}) {
		t.Fatalf("status=failed walked %v, want [%s]", got, w.bad4)
	}
}
