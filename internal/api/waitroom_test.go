package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

// protect puts a waiting room in front of org A's event, opened a minute
// ago, at rate admissions a second.
func (h *harness) protect(event string, rate int) {
	h.t.Helper()
	_, err := h.queue.Protect(context.Background(), h.st.Catalog, ticketing.Tenant{OrganizerID: orgA, Environment: ticketing.EnvTest},
		waitroom.ProtectRequest{EventID: event, OpensAt: h.clk.Now().Add(-time.Minute), Rate: rate, Difficulty: 4})
	if err != nil {
		h.t.Fatal(err)
	}
}

// queueJoin answers a challenge of event's queue over HTTP and returns the queue token.
func (h *harness) queueJoin(pk, event string, opts ...reqOpt) string {
	h.t.Helper()
	r := h.get("/v1/queue/"+event+"/challenge", pk, append([]reqOpt{fromShop()}, opts...)...)
	wantStatus(h.t, r, http.StatusOK)
	ch := r.json(h.t)
	tok := ch["challenge"].(string)
	nonce := waitroom.Solve(tok, int(ch["difficulty"].(float64)))
	r = h.post("/v1/queue/"+event+"/join", pk, jsonBody("challenge", tok, "nonce", nonce), append([]reqOpt{fromShop()}, opts...)...)
	wantStatus(h.t, r, http.StatusCreated)
	return r.json(h.t)["token"].(string)
}

// admission joins, waits until admitted and returns the admission token.
func (h *harness) admission(pk, event string, opts ...reqOpt) string {
	h.t.Helper()
	q := h.queueJoin(pk, event, opts...)
	h.clk.Advance(5 * time.Second) // past the join's bucket and the settle time
	r := h.get("/v1/queue/"+event+"/status?token="+url.QueryEscape(q), pk, append([]reqOpt{fromShop()}, opts...)...)
	wantStatus(h.t, r, http.StatusOK)
	st := r.json(h.t)
	a, ok := st["admission"].(map[string]any)
	if st["state"] != "admitted" || !ok {
		h.t.Fatalf("not admitted: %v", st)
	}
	return a["token"].(string)
}

func admissionHeader(tok string) reqOpt { return header("Tix-Admission", tok) }

func TestWaitingRoom_PKHoldsAndOrdersOfAProtectedOnSaleNeedAnAdmission(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	sk, _ := h.key(orgA, auth.Secret)
	// Before the protection: no admission needed.
	h.mustHold(pk, holdBody("evt_theatre", "seat_A1"), fromShop())
	h.protect("evt_theatre", 1000)
	wantError(t, h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_A2"), fromShop()), http.StatusForbidden, "admission_required", "Tix-Admission")
	wantError(t, h.post("/v1/orders", pk, standBody(1), idem("no-admission"), fromShop()), http.StatusForbidden, "admission_required", "Tix-Admission")
	wantError(t, h.post("/v1/orders", pk, jsonBody("buyer", anna, "tier_id", "tier_stand", "quantity", 1), idem("tier-only"), fromShop()),
		http.StatusForbidden, "admission_required", "Tix-Admission")
	h.mustHold(sk, holdBody("evt_theatre", "seat_A3")) // the organizer's server needs none

	adm := h.admission(pk, "evt_theatre")
	wantError(t, h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_A4"), fromShop(), admissionHeader(adm), remoteAddr("198.51.100.7:5000")),
		http.StatusForbidden, "admission_required", "Tix-Admission")
	wantError(t, h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_A4"), fromShop(), admissionHeader(adm+"x")),
		http.StatusForbidden, "admission_required", "Tix-Admission")
	hold := h.mustHold(pk, holdBody("evt_theatre", "seat_A4", "seat_A5"), fromShop(), admissionHeader(adm))
	seats := jsonBody("buyer", anna, "seat_reservation_ids", reservationIDs(hold))
	wantError(t, h.post("/v1/orders", pk, seats, idem("seats"), fromShop()), http.StatusForbidden, "admission_required", "Tix-Admission")
	h.mustOrder(pk, "seats", seats, fromShop(), admissionHeader(adm))
	// Its retry replays; another order with the spent admission is refused, and so is a hold.
	wantStatus(t, h.post("/v1/orders", pk, seats, idem("seats"), fromShop(), admissionHeader(adm)), http.StatusOK)
	wantError(t, h.post("/v1/orders", pk, standBody(1), idem("second"), fromShop(), admissionHeader(adm)), http.StatusForbidden, "admission_required", "Tix-Admission")
	wantError(t, h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_B1"), fromShop(), admissionHeader(adm)), http.StatusForbidden, "admission_required", "Tix-Admission")

	// An order refused for its own reason gives the admission back.
	fresh := h.admission(pk, "evt_theatre")
	wantError(t, h.post("/v1/orders", pk, standBody(11), idem("too-many"), fromShop(), admissionHeader(fresh)), http.StatusBadRequest, "invalid_request", "standing_items[0].qty")
	h.mustOrder(pk, "after-refusal", standBody(1), fromShop(), admissionHeader(fresh))

	late := h.admission(pk, "evt_theatre")
	h.clk.Advance(waitroom.DefaultSettings.AdmissionTTL + time.Minute)
	r := h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_B2"), fromShop(), admissionHeader(late))
	wantError(t, r, http.StatusForbidden, "admission_required", "Tix-Admission")
	if !strings.Contains(string(r.body), "expired") {
		t.Errorf("expired admission: %s", r.body)
	}
}

// Two orders (eight, in fact) sent at once with one admission: one is created.
func TestWaitingRoom_ParallelOrdersWithOneAdmissionOneWins(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	h.protect("evt_theatre", 1000)
	adm := h.admission(pk, "evt_theatre")
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() {
			codes[i] = h.post("/v1/orders", pk, standBody(1), idem(fmt.Sprint("parallel-", i)), fromShop(), admissionHeader(adm)).StatusCode
		})
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusForbidden:
		default:
			t.Fatalf("answers %v", codes)
		}
	}
	if created != 1 {
		t.Fatalf("%d orders created with one admission: %v", created, codes)
	}
}

func TestWaitingRoom_JoinRefusesWrongReusedAndExpiredAnswers(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	h.protect("evt_theatre", 1000)
	ch := h.get("/v1/queue/evt_theatre/challenge", pk, fromShop()).json(t)
	tok, bits := ch["challenge"].(string), int(ch["difficulty"].(float64))
	nonce := waitroom.Solve(tok, bits)
	wrong := "0"
	for n := 1; waitroom.Solved(tok, wrong, bits); n++ {
		wrong = fmt.Sprint(n)
	}
	join := func(nonce string) response {
		return h.post("/v1/queue/evt_theatre/join", pk, jsonBody("challenge", tok, "nonce", nonce), fromShop())
	}
	wantError(t, join(wrong), http.StatusBadRequest, "invalid_request", "nonce")
	wantError(t, join("12a"), http.StatusBadRequest, "invalid_request", "nonce")
	wantStatus(t, join(nonce), http.StatusCreated)
	wantError(t, join(nonce), http.StatusConflict, "conflict", "")
	ch = h.get("/v1/queue/evt_theatre/challenge", pk, fromShop()).json(t)
	tok = ch["challenge"].(string)
	h.clk.Advance(waitroom.DefaultSettings.ChallengeTTL)
	wantError(t, join(waitroom.Solve(tok, bits)), http.StatusBadRequest, "invalid_request", "challenge")
	wantError(t, h.post("/v1/queue/evt_theatre/join", pk, `{"nonce":"1"}`, fromShop()), http.StatusBadRequest, "invalid_request", "challenge")
	// Not protected, another organizer's key, a disallowed origin.
	wantError(t, h.get("/v1/queue/evt_concert/challenge", pk, fromShop()), http.StatusNotFound, "not_found", "")
	wantError(t, h.get("/v1/queue/evt_theatre/challenge", h.pkKey(orgB), fromShop()), http.StatusNotFound, "not_found", "")
	wantError(t, h.get("/v1/queue/evt_theatre/challenge", pk, header("Origin", "https://evil.example")), http.StatusForbidden, "origin_not_allowed", "origin")
	// The hosted page's own origin may call.
	wantStatus(t, h.get("/v1/queue/evt_theatre/challenge", pk, header("Origin", "http://127.0.0.1:8080")), http.StatusOK)
	wantStatus(t, h.get("/v1/queue/evt_theatre/challenge", pk, header("Sec-Fetch-Site", "same-origin")), http.StatusOK)
}

func TestWaitingRoom_StatusIsBoundToTheNetworkAndCacheable(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	h.protect("evt_theatre", 1000)
	q := h.queueJoin(pk, "evt_theatre")
	r := h.get("/v1/queue/evt_theatre/status?token="+url.QueryEscape(q), pk, fromShop())
	wantStatus(t, r, http.StatusOK)
	if st := r.json(t); st["state"] != "queued" || st["admission"] != nil {
		t.Fatalf("before its bucket settles: %v", st)
	}
	if cc := r.Header.Get("Cache-Control"); !strings.HasPrefix(cc, "private, max-age=") {
		t.Errorf("Cache-Control %q", cc)
	}
	wantError(t, h.get("/v1/queue/evt_theatre/status?token="+url.QueryEscape(q), pk, fromShop(), remoteAddr("198.51.100.7:5000")), http.StatusForbidden, "forbidden", "")
	wantError(t, h.get("/v1/queue/evt_theatre/status?token=nope", pk, fromShop()), http.StatusBadRequest, "invalid_request", "token")
	wantError(t, h.get("/v1/queue/evt_theatre/status", pk, fromShop()), http.StatusBadRequest, "invalid_request", "token")
}

func TestWaitingRoom_HostedPageIsFramedOnlyByTheKeysOrigins(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	h.protect("evt_theatre", 1000)
	r := h.do(http.MethodGet, "/v1/queue/evt_theatre?pk="+pk+"&origin="+url.QueryEscape(shopOrigin), "")
	wantStatus(t, r, http.StatusOK)
	csp := r.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors "+shopOrigin+";") || !strings.Contains(csp, "connect-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	if !strings.Contains(string(r.body), "crypto.subtle.digest") || strings.Contains(string(r.body), "<script src") {
		t.Errorf("the page does not carry its own proof-of-work script")
	}
	for target, status := range map[string]int{
		"/v1/queue/evt_theatre?pk=" + pk + "&origin=" + url.QueryEscape("https://evil.example"):     http.StatusBadRequest,
		"/v1/queue/evt_theatre?pk=" + pk + "&return=" + url.QueryEscape("https://evil.example/buy"): http.StatusBadRequest,
		"/v1/queue/evt_theatre?pk=pk_test_nope":                                                     http.StatusBadRequest,
		"/v1/queue/evt_concert?pk=" + pk:                                                            http.StatusNotFound,
		"/v1/queue/evt_theatre?pk=" + pk + "&return=" + url.QueryEscape(shopOrigin+"/checkout?e=1"): http.StatusOK,
	} {
		if r := h.do(http.MethodGet, target, ""); r.StatusCode != status || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s, want %d", target, r.StatusCode, r.Header.Get("Content-Type"), status)
		}
	}
}
