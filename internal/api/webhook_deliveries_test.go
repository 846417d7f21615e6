package api_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/webhook"
)

// ---- GET /webhook-deliveries ----

type deliveryItem struct {
	ID             string  `json:"id"`
	EndpointID     string  `json:"endpoint_id"`
	EventType      string  `json:"event_type"`
	OrderID        *string `json:"order_id"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	MaxAttempts    int     `json:"max_attempts"`
	LastStatusCode *int    `json:"last_status_code"`
	LastError      *string `json:"last_error"`
	NextAttemptAt  string  `json:"next_attempt_at"`
	DeliveredAt    *string `json:"delivered_at"`
	FailedAt       *string `json:"failed_at"`
	CreatedAt      string  `json:"created_at"`
}

type deliveryPage struct {
	Data       []deliveryItem `json:"data"`
	NextCursor *string        `json:"next_cursor"`
	HasMore    bool           `json:"has_more"`
}

var deliveryFields = []string{"id", "endpoint_id", "event_type", "order_id", "status", "attempts", "max_attempts",
	"last_status_code", "last_error", "next_attempt_at", "delivered_at", "failed_at", "created_at"}

// deliveries is one page of GET /v1/webhook-deliveries?query.
func (w *hookWorld) deliveries(secret, query string) deliveryPage {
	w.t.Helper()
	r := w.h.get("/v1/webhook-deliveries?"+query, secret)
	wantStatus(w.t, r, http.StatusOK)
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		w.t.Errorf("Cache-Control %q, want no-store", cc)
	}
	var raw struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(r.body, &raw); err != nil || raw.Data == nil {
		w.t.Fatalf("delivery page %s: %v", r.body, err)
	}
	want := slices.Sorted(slices.Values(deliveryFields))
	for _, it := range raw.Data {
		if got := slices.Sorted(maps.Keys(it)); !slices.Equal(got, want) {
			w.t.Errorf("delivery fields %v, want exactly %v", got, want)
		}
	}
	var p deliveryPage
	if err := json.Unmarshal(r.body, &p); err != nil {
		w.t.Fatal(err)
	}
	if p.HasMore != (p.NextCursor != nil) || p.NextCursor != nil && *p.NextCursor == "" {
		w.t.Errorf("has_more %v with next_cursor %v: %s", p.HasMore, p.NextCursor, r.body)
	}
	return p
}

func deliveryIDs(items []deliveryItem) []string {
	var ids []string
	for _, d := range items {
		ids = append(ids, d.ID)
	}
	return ids
}

// walk pages GET /v1/webhook-deliveries?query with limit, checking every
// page but the last is full with has_more and a cursor, and returns every item.
func (w *hookWorld) walk(secret, query string, limit int) []deliveryItem {
	w.t.Helper()
	var all []deliveryItem
	cursor := ""
	for page := 0; ; page++ {
		if page > 20 {
			w.t.Fatalf("more than 20 pages of %s", query)
		}
		q := url.Values{"limit": {itoa(limit)}}
		extra, err := url.ParseQuery(query)
		if err != nil {
			w.t.Fatal(err)
		}
		for k, v := range extra {
			q[k] = v
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		p := w.deliveries(secret, q.Encode())
		all = append(all, p.Data...)
		if !p.HasMore {
			if p.NextCursor != nil {
				w.t.Errorf("last page of %s has next_cursor %q", query, *p.NextCursor)
			}
			if len(p.Data) > limit {
				w.t.Errorf("last page of %s has %d items, limit %d", query, len(p.Data), limit)
			}
			return all
		}
		if len(p.Data) != limit {
			w.t.Errorf("page %d of %s has %d items with has_more, want %d", page, query, len(p.Data), limit)
		}
		cursor = *p.NextCursor
	}
}

func (w *hookWorld) wantIDs(what string, got []deliveryItem, want ...string) {
	w.t.Helper()
	if g := deliveryIDs(got); !slices.Equal(sortedIDs(g...), sortedIDs(want...)) {
		w.t.Errorf("%s: %v, want (in any order) %v", what, g, want)
	}
}

// wantNewestFirst checks created_at never increases down the list.
func (w *hookWorld) wantNewestFirst(what string, items []deliveryItem) {
	w.t.Helper()
	for i := 1; i < len(items); i++ {
		if items[i].CreatedAt > items[i-1].CreatedAt {
			w.t.Errorf("%s not newest first: %s (%s) after %s (%s)", what, items[i].ID, items[i].CreatedAt, items[i-1].ID, items[i-1].CreatedAt)
		}
	}
}

func TestWebhookDeliveries_ListPagesFiltersAndTenancy(t *testing.T) {
	w := newHookWorld(t)
	h := w.h
	w.attemptAll()
	allA := []string{w.ok1, w.bad1, w.ok2, w.ok3, w.bad3, w.ok4, w.bad4}

	// Default page: org A's test deliveries, newest first.
	p := w.deliveries(w.skA, "")
	if p.HasMore || p.NextCursor != nil {
		t.Errorf("7 deliveries with the default limit 20: has_more %v next_cursor %v", p.HasMore, p.NextCursor)
	}
	w.wantIDs("org A deliveries", p.Data, allA...)
	w.wantNewestFirst("org A deliveries", p.Data)
	if len(p.Data) == 7 {
		// The events were fanned out e1 < e2 < e3 < e4, one second apart.
		first, last := p.Data[:2], p.Data[5:]
		w.wantIDs("the newest two (e4)", first, w.ok4, w.bad4)
		w.wantIDs("the oldest two (e1)", last, w.ok1, w.bad1)
		if p.Data[2].CreatedAt <= p.Data[4].CreatedAt || p.Data[4].CreatedAt <= p.Data[5].CreatedAt {
			t.Errorf("created_at of e3, e2, e1 deliveries not strictly decreasing: %+v", p.Data)
		}
	}
	byID := map[string]deliveryItem{}
	for _, d := range p.Data {
		byID[d.ID] = d
	}

	// Fields: delivered, pending after a failed attempt, failed, cancelled event.
	ok1 := byID[w.ok1]
	if ok1.EndpointID != w.epOK.ID || ok1.EventType != "order.paid" || ok1.OrderID == nil || *ok1.OrderID != w.orders[w.ok1] ||
		ok1.Status != "delivered" || ok1.Attempts != 1 || ok1.MaxAttempts != 8 ||
		ok1.LastStatusCode == nil || *ok1.LastStatusCode != 200 || ok1.LastError != nil ||
		ok1.DeliveredAt == nil || *ok1.DeliveredAt != rfc3339(w.attemptedAt[w.ok1]) || ok1.FailedAt != nil ||
		ok1.CreatedAt != rfc3339(w.fannedOut[w.ok1]) || ok1.NextAttemptAt == "" {
		t.Errorf("delivered ok1: %+v", ok1)
	}
	bad1 := byID[w.bad1]
	if bad1.EndpointID != w.epBad.ID || bad1.Status != "pending" || bad1.Attempts != 1 || bad1.MaxAttempts != 8 ||
		bad1.LastStatusCode == nil || *bad1.LastStatusCode != 500 || bad1.LastError == nil || !strings.Contains(*bad1.LastError, "500") ||
		bad1.NextAttemptAt != rfc3339(w.attemptedAt[w.bad1].Add(time.Minute)) || bad1.DeliveredAt != nil || bad1.FailedAt != nil {
		t.Errorf("pending bad1 (next attempt 1 minute after the first, per the schedule): %+v", bad1)
	}
	bad4 := byID[w.bad4]
	if bad4.Status != "failed" || bad4.Attempts != 1 || bad4.MaxAttempts != 1 || bad4.FailedAt == nil ||
		*bad4.FailedAt != rfc3339(w.attemptedAt[w.bad4]) || bad4.DeliveredAt != nil || bad4.LastStatusCode == nil || *bad4.LastStatusCode != 500 {
		t.Errorf("failed bad4: %+v", bad4)
	}
	if ok2 := byID[w.ok2]; ok2.EventType != "order.cancelled" || ok2.OrderID == nil || *ok2.OrderID != w.orders[w.ok2] || ok2.Status != "delivered" {
		t.Errorf("delivered order.cancelled ok2: %+v", ok2)
	}

	// Paging: every limit walks the same list in the same order.
	for _, limit := range []int{1, 2, 3, 6, 7, 100} {
		got := w.walk(w.skA, "", limit)
		if !slices.Equal(deliveryIDs(got), deliveryIDs(p.Data)) {
			t.Errorf("limit %d walked %v, want %v", limit, deliveryIDs(got), deliveryIDs(p.Data))
		}
	}
	// Exactly one page's worth: no cursor.
	if p := w.deliveries(w.skA, "limit=7"); p.HasMore || p.NextCursor != nil || len(p.Data) != 7 {
		t.Errorf("limit=7 over 7 deliveries: has_more %v next_cursor %v, %d items", p.HasMore, p.NextCursor, len(p.Data))
	}
	first := w.deliveries(w.skA, "limit=3")
	if !first.HasMore || first.NextCursor == nil || len(first.Data) != 3 {
		t.Fatalf("limit=3: %+v", first)
	}
	cur := *first.NextCursor

	// Filters.
	w.wantIDs("endpoint_id=epBad", w.walk(w.skA, "endpoint_id="+w.epBad.ID, 2), w.bad1, w.bad3, w.bad4)
	w.wantIDs("endpoint_id=epOK", w.walk(w.skA, "endpoint_id="+w.epOK.ID, 3), w.ok1, w.ok2, w.ok3, w.ok4)
	w.wantIDs("status=delivered", w.walk(w.skA, "status=delivered", 3), w.ok1, w.ok2, w.ok3, w.ok4)
	w.wantIDs("status=pending", w.walk(w.skA, "status=pending", 1), w.bad1, w.bad3)
	w.wantIDs("status=failed", w.walk(w.skA, "status=failed", 20), w.bad4)
	w.wantIDs("status=skipped", w.walk(w.skA, "status=skipped", 20))
	w.wantIDs("endpoint_id=epBad&status=pending", w.walk(w.skA, "endpoint_id="+w.epBad.ID+"&status=pending", 1), w.bad1, w.bad3)
	w.wantIDs("endpoint_id=epOK&status=pending", w.walk(w.skA, "endpoint_id="+w.epOK.ID+"&status=pending", 5))
	w.wantIDs("endpoint_id=epNew (unverified)", w.walk(w.skA, "endpoint_id="+w.epNew.ID, 5))
	w.wantIDs("endpoint_id unknown", w.walk(w.skA, "endpoint_id=we_doesnotexist", 5))
	w.wantIDs("endpoint_id malformed", w.walk(w.skA, "endpoint_id="+url.QueryEscape("we_x y/../z"), 5))
	for _, items := range [][]deliveryItem{w.walk(w.skA, "status=delivered", 1), w.walk(w.skA, "endpoint_id="+w.epBad.ID, 1)} {
		w.wantNewestFirst("a filtered walk", items)
	}

	// Tenancy: org B sees its own delivery only, also by its endpoint; org A
	// cannot list org B's by endpoint_id; the live key sees no test deliveries.
	pb := w.deliveries(w.skB, "")
	w.wantIDs("org B deliveries", pb.Data, w.b1)
	if len(pb.Data) == 1 && (pb.Data[0].EndpointID != w.epB.ID || pb.Data[0].Status != "delivered") {
		t.Errorf("org B delivery %+v", pb.Data[0])
	}
	w.wantIDs("org B by endpoint", w.deliveries(w.skB, "endpoint_id="+w.epB.ID).Data, w.b1)
	w.wantIDs("org B by org A's endpoint", w.deliveries(w.skB, "endpoint_id="+w.epOK.ID).Data)
	w.wantIDs("org A by org B's endpoint", w.deliveries(w.skA, "endpoint_id="+w.epB.ID).Data)
	w.wantIDs("org A live", w.deliveries(w.skALive, "").Data)
	w.wantIDs("org A live by a test endpoint", w.deliveries(w.skALive, "endpoint_id="+w.epOK.ID).Data)
	for _, d := range p.Data {
		if d.ID == w.b1 {
			t.Errorf("org B's delivery in org A's list")
		}
	}

	// Cursors: bound to the query and the key's tenant, and tamper-proof.
	next := w.deliveries(w.skA, "limit=3&cursor="+url.QueryEscape(cur))
	if got := deliveryIDs(next.Data); !slices.Equal(got, deliveryIDs(p.Data)[3:6]) {
		t.Errorf("second page %v, want %v", got, deliveryIDs(p.Data)[3:6])
	}
	wantError(t, h.get("/v1/webhook-deliveries?limit=3&status=delivered&cursor="+url.QueryEscape(cur), w.skA), http.StatusBadRequest, "invalid_request", "cursor")
	wantError(t, h.get("/v1/webhook-deliveries?limit=3&endpoint_id="+w.epOK.ID+"&cursor="+url.QueryEscape(cur), w.skA), http.StatusBadRequest, "invalid_request", "cursor")
	wantError(t, h.get("/v1/webhook-deliveries?limit=3&cursor="+url.QueryEscape(cur), w.skB), http.StatusBadRequest, "invalid_request", "cursor")
	wantError(t, h.get("/v1/webhook-deliveries?limit=3&cursor="+url.QueryEscape(cur), w.skALive), http.StatusBadRequest, "invalid_request", "cursor")
	tampered := []byte(cur)
	if tampered[0] == 'A' {
		tampered[0] = 'B'
	} else {
		tampered[0] = 'A'
	}
	for _, bad := range []string{string(tampered), cur[:len(cur)-2], cur + "x", "not-a-cursor", strings.Repeat("A", 3000)} {
		wantError(t, h.get("/v1/webhook-deliveries?cursor="+url.QueryEscape(bad), w.skA), http.StatusBadRequest, "invalid_request", "cursor")
	}

	// Parameters.
	for _, c := range []struct{ query, param string }{
		{"status=sent", "status"},
		{"status=DELIVERED", "status"},
		{"status=pending&status=failed", "status"},
		{"limit=0", "limit"},
		{"limit=101", "limit"},
		{"limit=-1", "limit"},
		{"limit=ten", "limit"},
		{"limit=2.5", "limit"},
		{"order=asc", "order"},
		{"event_type=order.paid", "event_type"},
	} {
		wantError(t, h.get("/v1/webhook-deliveries?"+c.query, w.skA), http.StatusBadRequest, "invalid_request", c.param)
	}
	if p := w.deliveries(w.skA, "limit=1"); len(p.Data) != 1 || !p.HasMore {
		t.Errorf("limit=1: %+v", p)
	}
	if p := w.deliveries(w.skA, "limit=100"); len(p.Data) != 7 || p.HasMore {
		t.Errorf("limit=100: %+v", p)
	}

	// Keys.
	pk := h.pkKey(orgA)
	wantError(t, h.get("/v1/webhook-deliveries", pk, fromShop()), http.StatusForbidden, "forbidden", "")
	noScope, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersList))
	wantError(t, h.get("/v1/webhook-deliveries", noScope), http.StatusForbidden, "insufficient_scope", "scope")
	wantError(t, h.do(http.MethodGet, "/v1/webhook-deliveries", ""), http.StatusUnauthorized, "unauthorized", "")
}

// ---- POST /webhook-deliveries/{id}/redeliver ----

func (w *hookWorld) redeliver(secret, id, body string) response {
	w.t.Helper()
	return w.h.post("/v1/webhook-deliveries/"+id+"/redeliver", secret, body)
}

func TestWebhookRedeliver_RequeuesConflictsAndTenancy(t *testing.T) {
	w := newHookWorld(t)
	h := w.h
	w.attemptAll()

	// A delivered delivery goes back to pending with a fresh schedule.
	r := w.redeliver(w.skA, w.ok1, "")
	wantStatus(t, r, http.StatusOK)
	var d deliveryItem
	if err := json.Unmarshal(r.body, &d); err != nil {
		t.Fatal(err)
	}
	now := h.clk.Now()
	if d.ID != w.ok1 || d.EndpointID != w.epOK.ID || d.EventType != "order.paid" || d.OrderID == nil || *d.OrderID != w.orders[w.ok1] ||
		d.Status != "pending" || d.Attempts != 0 || d.MaxAttempts != 8 ||
		d.NextAttemptAt != rfc3339(now.Add(webhook.DefaultSettings.RedeliverDelay)) ||
		d.LastStatusCode != nil || d.LastError != nil || d.DeliveredAt != nil || d.FailedAt != nil ||
		d.CreatedAt != rfc3339(w.fannedOut[w.ok1]) {
		t.Errorf("redelivered ok1 (next attempt %s after now %s): %+v", webhook.DefaultSettings.RedeliverDelay, rfc3339(now), d)
	}
	if st := w.stored(w.ok1); st.Status != webhook.DeliveryPending || st.Gen != 2 {
		t.Errorf("stored after redeliver: status %s gen %d", st.Status, st.Gen)
	}
	// Again at once: it is pending.
	wantError(t, w.redeliver(w.skA, w.ok1, ""), http.StatusConflict, "conflict", "")
	w.wantIDs("pending after redeliver", w.walk(w.skA, "status=pending", 5), w.ok1, w.bad1, w.bad3)
	// Its attempt (generation 2) delivers it again.
	before := w.okRC.received()
	w.attempt(w.ok1, 2, 1)
	if w.okRC.received() != before+1 {
		t.Errorf("the redelivered attempt did not reach the receiver")
	}
	for _, it := range w.deliveries(w.skA, "endpoint_id="+w.epOK.ID).Data {
		if it.ID == w.ok1 && (it.Status != "delivered" || it.Attempts != 1 || it.DeliveredAt == nil || *it.DeliveredAt != rfc3339(w.attemptedAt[w.ok1])) {
			t.Errorf("ok1 after the redelivered attempt: %+v", it)
		}
	}
	// and it can be redelivered again.
	wantStatus(t, w.redeliver(w.skA, w.ok1, ""), http.StatusOK)

	// A failed delivery is requeued with the current schedule (8 attempts).
	r = w.redeliver(w.skA, w.bad4, "")
	wantStatus(t, r, http.StatusOK)
	if m := r.json(t); m["status"] != "pending" || num(t, m, "attempts") != 0 || num(t, m, "max_attempts") != 8 || m["failed_at"] != nil || m["last_status_code"] != nil {
		t.Errorf("redelivered failed bad4: %s", r.body)
	}
	// A pending one (a retry is scheduled) is a conflict.
	wantError(t, w.redeliver(w.skA, w.bad1, ""), http.StatusConflict, "conflict", "")

	// Bodies: none, an empty object; an unknown field or malformed JSON is 400.
	wantError(t, w.redeliver(w.skA, w.ok2, `{"force":true}`), http.StatusBadRequest, "invalid_request", "force")
	wantError(t, w.redeliver(w.skA, w.ok2, `{`), http.StatusBadRequest, "invalid_request", "")
	wantError(t, w.redeliver(w.skA, w.ok2, `[]`), http.StatusBadRequest, "invalid_request", "")
	if st := w.stored(w.ok2); st.Status != webhook.DeliveryDelivered || st.Gen != 1 {
		t.Errorf("a refused request changed ok2: %s gen %d", st.Status, st.Gen)
	}
	wantStatus(t, w.redeliver(w.skA, w.ok2, `{}`), http.StatusOK)

	// Tenancy: another organizer's or environment's delivery is not found.
	wantError(t, w.redeliver(w.skB, w.ok3, ""), http.StatusNotFound, "not_found", "")
	wantError(t, w.redeliver(w.skALive, w.ok3, ""), http.StatusNotFound, "not_found", "")
	wantError(t, w.redeliver(w.skA, w.b1, ""), http.StatusNotFound, "not_found", "")
	if st := w.stored(w.b1); st.Status != webhook.DeliveryDelivered || st.Gen != 1 {
		t.Errorf("org A's request changed org B's delivery: %s gen %d", st.Status, st.Gen)
	}
	if st := w.stored(w.ok3); st.Status != webhook.DeliveryDelivered || st.Gen != 1 {
		t.Errorf("org B's request changed org A's delivery: %s gen %d", st.Status, st.Gen)
	}
	for _, id := range []string{"whd_doesnotexist_doesnotexist", webhook.DeliveryID("evt_nope", w.epOK.ID), "not-a-delivery", "whd_", "whd_a_b_c"} {
		wantError(t, w.redeliver(w.skA, url.PathEscape(id), ""), http.StatusNotFound, "not_found", "")
	}

	// After the endpoint is disabled its deliveries are skipped, and neither
	// a skipped nor any other delivery of it can be redelivered.
	if _, err := w.svc.DisableEndpoint(w.ctx, w.epBad.ID); err != nil {
		t.Fatal(err)
	}
	w.wantIDs("skipped after disabling epBad", w.walk(w.skA, "status=skipped", 5), w.bad1, w.bad3, w.bad4)
	for _, id := range []string{w.bad1, w.bad3, w.bad4} {
		wantError(t, w.redeliver(w.skA, id, ""), http.StatusConflict, "conflict", "")
		if st := w.stored(id); st.Status != webhook.DeliverySkipped {
			t.Errorf("%s after a refused redeliver: %s", id, st.Status)
		}
	}
	// Enabled again, a skipped delivery can be redelivered.
	if _, err := w.svc.EnableEndpoint(w.ctx, w.epBad.ID); err != nil {
		t.Fatal(err)
	}
	r = w.redeliver(w.skA, w.bad3, "")
	wantStatus(t, r, http.StatusOK)
	if m := r.json(t); m["status"] != "pending" || m["last_error"] != nil {
		t.Errorf("redelivered skipped bad3: %s", r.body)
	}

	// An endpoint whose URL changed (unverified) or that was deleted: conflict.
	if _, err := w.svc.UpdateEndpoint(w.ctx, w.epOK.ID, webhook.EndpointChange{URL: sp(w.okRC.srv.URL + "/moved")}); err != nil {
		t.Fatal(err)
	}
	wantError(t, w.redeliver(w.skA, w.ok3, ""), http.StatusConflict, "conflict", "")
	if err := w.svc.DeleteEndpoint(w.ctx, w.epOK.ID); err != nil {
		t.Fatal(err)
	}
	wantError(t, w.redeliver(w.skA, w.ok3, ""), http.StatusConflict, "conflict", "")

	// Keys.
	pk := h.pkKey(orgA)
	wantError(t, h.post("/v1/webhook-deliveries/"+w.ok4+"/redeliver", pk, "", fromShop()), http.StatusForbidden, "forbidden", "")
	noScope, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersWrite))
	wantError(t, w.redeliver(noScope, w.ok4, ""), http.StatusForbidden, "insufficient_scope", "scope")
	wantError(t, h.post("/v1/webhook-deliveries/"+w.ok4+"/redeliver", "", ""), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, h.get("/v1/webhook-deliveries/"+w.ok4+"/redeliver", w.skA), http.StatusMethodNotAllowed, "method_not_allowed", "")
}
