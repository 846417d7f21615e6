package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// ---- GET /order-events: the event log ----

type eventLogPage struct {
	Data       []json.RawMessage `json:"data"`
	NextCursor *string           `json:"next_cursor"`
	HasMore    bool              `json:"has_more"`
}

// eventLog walks GET /v1/order-events?query to its end, returning the event
// ids in order and the pages it took.
func eventLog(t *testing.T, h *harness, secret, query string) ([]string, int) {
	t.Helper()
	var ids []string
	cursor, pages := "", 0
	for {
		q := query
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := h.get("/v1/order-events?"+q, secret)
		wantStatus(t, r, http.StatusOK)
		var p eventLogPage
		if err := json.Unmarshal(r.body, &p); err != nil || p.Data == nil {
			t.Fatalf("event page %s: %v", r.body, err)
		}
		pages++
		for _, raw := range p.Data {
			var env webhook.Envelope
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, env.ID)
		}
		if p.HasMore != (p.NextCursor != nil) {
			t.Fatalf("has_more %v with next_cursor %v", p.HasMore, p.NextCursor)
		}
		if !p.HasMore {
			return ids, pages
		}
		cursor = *p.NextCursor
	}
}

// The event log lists an organizer environment's order events newest first,
// each exactly the envelope its webhooks carry, pages with cursors, filters
// by type, order and creation time, and shows nothing of another organizer.
func TestOrderEvents_LogListsTheWebhookEnvelopesNewestFirst(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	svc, pub := h.withWebhooks()
	w := &hookWorld{h: h, t: t, svc: svc, pub: pub}
	skA, _ := h.key(orgA, auth.Secret)
	skB, _ := h.key(orgB, auth.Secret)
	pkA, _ := h.key(orgA, auth.Publishable)

	var evs, orders []string
	var times []time.Time
	for i, outcome := range []string{ticketing.OutcomePaid, ticketing.OutcomeCancelled, ticketing.OutcomePaid} {
		h.clk.Advance(time.Second)
		times = append(times, h.clk.Now())
		e, o := w.orderEvent(skA, "log-"+string(rune('a'+i)), "evt_concert_ga", outcome)
		evs, orders = append(evs, e), append(orders, o)
	}
	h.clk.Advance(time.Second)
	eB, _ := w.orderEvent(skB, "log-b", "evt_other_ga", ticketing.OutcomePaid)
	newest := []string{evs[2], evs[1], evs[0]}

	// The whole page: the webhook envelopes, byte for byte.
	r := h.get("/v1/order-events", skA)
	wantStatus(t, r, http.StatusOK)
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	var p eventLogPage
	if err := json.Unmarshal(r.body, &p); err != nil || len(p.Data) != 3 || p.HasMore || p.NextCursor != nil {
		t.Fatalf("event log %s: %v", r.body, err)
	}
	for i, raw := range p.Data {
		ev, _, err := h.st.Webhooks.GetOrderEvent(t.Context(), newest[i])
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(webhook.EventEnvelope(ev))
		if string(raw) != string(want) {
			t.Errorf("item %d:\n got %s\nwant %s (the webhook envelope)", i, raw, want)
		}
	}

	cases := []struct{ name, secret, query string }{
		{"paged", skA, "limit=1"},
		{"by type", skA, "type=order.cancelled"},
		{"by type, paged", skA, "type=order.paid&limit=1"},
		{"by order", skA, "order_id=" + orders[0]},
		{"created after", skA, "created_after=" + rfc3339(times[1])},
		{"created after, paged", skA, "limit=1&created_after=" + rfc3339(times[1])},
		{"after the last", skA, "created_after=" + rfc3339(h.clk.Now().Add(time.Hour))},
		{"another organizer", skB, ""},
		{"another organizer's order", skB, "order_id=" + orders[0]},
		{"an unknown order", skA, "order_id=ord_nope"},
	}
	want := [][]string{newest, {evs[1]}, {evs[2], evs[0]}, {evs[0]}, {evs[2], evs[1]}, {evs[2], evs[1]}, nil, {eB}, nil, nil}
	for i, c := range cases {
		got, pages := eventLog(t, h, c.secret, c.query)
		if !slices.Equal(got, want[i]) {
			t.Errorf("%s (%s): %v, want %v", c.name, c.query, got, want[i])
		}
		if c.query == "limit=1" && pages != 3 {
			t.Errorf("limit=1 took %d pages, want 3", pages)
		}
	}

	wantError(t, h.get("/v1/order-events?type=order.created", skA), http.StatusBadRequest, "invalid_request", "type")
	wantError(t, h.get("/v1/order-events?created_after=yesterday", skA), http.StatusBadRequest, "invalid_request", "created_after")
	wantError(t, h.get("/v1/order-events?limit=0", skA), http.StatusBadRequest, "invalid_request", "limit")
	wantError(t, h.get("/v1/order-events?cursor=junk", skA), http.StatusBadRequest, "invalid_request", "cursor")
	if r := h.get("/v1/order-events", pkA); r.StatusCode != http.StatusForbidden {
		t.Errorf("a publishable key on the event log: %d %s, want 403", r.StatusCode, r.body)
	}
}
