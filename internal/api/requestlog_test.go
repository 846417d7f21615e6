package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// logged waits until the request log has the request (the record is written
// after the response) and returns it as the owner's secret key reads it.
func (h *harness) logged(id, secret string) map[string]any {
	h.t.Helper()
	testenv.WaitFor(h.t, 5*time.Second, "request "+id+" in the request log", func() bool {
		rec, err := h.st.RequestLog().GetRequest(context.Background(), id)
		if err != nil {
			h.t.Fatal(err)
		}
		return rec != nil
	})
	res := h.get("/v1/request-log/"+id, secret)
	wantStatus(h.t, res, http.StatusOK)
	return res.json(h.t)
}

func TestRequestLog_KeepsEveryKeyedRequestForItsOrganizerAndMode(t *testing.T) {
	h := newHarness(t)
	h.srv.RequestLog = h.st.RequestLog()
	h.organizer("org_a")
	h.organizer("org_b")
	skA, keyA := h.key("org_a", auth.Secret)
	pkA, keyPA := h.key("org_a", auth.Publishable)
	liveA, keyLA := h.key("org_a", auth.Secret, withEnv(ticketing.EnvLive))
	skB, _ := h.key("org_b", auth.Secret)

	// A success, with a query string and an id in the path that the log keeps out.
	ok := h.get("/v1/events?q=buyer@example.com", skA)
	wantStatus(t, ok, http.StatusOK)
	got := h.logged(ok.Header.Get("Tix-Request-Id"), skA)
	want := map[string]any{"object": "request_log_entry", "request_id": ok.Header.Get("Tix-Request-Id"), "method": "GET",
		"path": "/v1/events", "status": float64(200), "error_code": nil, "key_id": keyA.ID, "livemode": false,
		"created_at": t0.UTC().Format(time.RFC3339)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v (%v)", k, got[k], v, got)
		}
	}
	// An error: its code, the route's template instead of the id.
	missing := h.get("/v1/orders/ord_buyer_id", skA)
	wantStatus(t, missing, http.StatusNotFound)
	got = h.logged(missing.Header.Get("Tix-Request-Id"), skA)
	if got["path"] != "/v1/orders/{id}" || got["status"] != float64(404) || got["error_code"] != "not_found" {
		t.Errorf("an error's entry: %v", got)
	}
	// A publishable key's request, read with the organizer's secret key.
	pub := h.get("/v1/events", pkA, header("Origin", "https://shop.example"))
	if got := h.logged(pub.Header.Get("Tix-Request-Id"), skA); got["key_id"] != keyPA.ID {
		t.Errorf("a pk request's entry: %v", got)
	}
	// A live request is the live keys' only.
	live := h.get("/v1/events", liveA)
	wantStatus(t, live, http.StatusOK)
	if got := h.logged(live.Header.Get("Tix-Request-Id"), liveA); got["key_id"] != keyLA.ID || got["livemode"] != true {
		t.Errorf("a live request's entry: %v", got)
	}

	id := ok.Header.Get("Tix-Request-Id")
	for name, read := range map[string]response{
		"another organizer's key":       h.get("/v1/request-log/"+id, skB),
		"a live key, a test request":    h.get("/v1/request-log/"+id, liveA),
		"a test key, a live request":    h.get("/v1/request-log/"+live.Header.Get("Tix-Request-Id"), skA),
		"an id that was never returned": h.get("/v1/request-log/req_000000000000000000000000", skA),
	} {
		if read.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404", name, read.StatusCode, read.body)
		}
	}
	wantError(t, h.get("/v1/request-log/"+id, pkA, header("Origin", "https://shop.example")), http.StatusForbidden, "forbidden", "")

	// Seven days on, the request is gone.
	h.clk.Advance(auth.RequestLogKeep + time.Second)
	wantError(t, h.get("/v1/request-log/"+id, skA), http.StatusNotFound, "not_found", "")
}

// A request no key of an organizer authenticated is not kept.
func TestRequestLog_KeepsNoUnauthenticatedRequest(t *testing.T) {
	h := newHarness(t)
	h.srv.RequestLog = h.st.RequestLog()
	h.organizer("org_a")
	skA, _ := h.key("org_a", auth.Secret)
	bad := h.get("/v1/events", "sk_test_"+"0000000000000000000000000000000000000000")
	wantStatus(t, bad, http.StatusUnauthorized)
	h.get("/v1/events", skA) // a later, logged request: the first had its chance to be written
	time.Sleep(200 * time.Millisecond)
	if rec, err := h.st.RequestLog().GetRequest(context.Background(), bad.Header.Get("Tix-Request-Id")); rec != nil || err != nil {
		t.Errorf("an unauthenticated request was kept: %+v %v", rec, err)
	}
	wantError(t, h.get("/v1/request-log/"+bad.Header.Get("Tix-Request-Id"), skA), http.StatusNotFound, "not_found", "")
}
