package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

func TestOrderRead_PIIMatrix(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	skStatus, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersStatus))
	skNoStatus, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersRead))
	pk := h.pkKey(orgA)
	skB, _ := h.key(orgB, auth.Secret)

	o := h.mustOrder(sk, "pii-1", gaBody("evt_concert_ga", 2))
	id, token := o["id"].(string), o["poll_token"].(string)
	other := h.mustOrder(sk, "pii-2", gaBody("evt_concert_ga", 1))

	type read struct {
		name   string
		do     func(path string) response
		status int
		pii    bool
	}
	withKey := func(secret string, opts ...reqOpt) func(string) response {
		return func(path string) response { return h.get(path, secret, opts...) }
	}
	checkKey := func(secret string, opts ...reqOpt) func(string) response {
		return func(path string) response { return h.post(path+"/check-status", secret, "", opts...) }
	}
	byToken := func(tok string) func(string) response {
		return func(path string) response { return h.do(http.MethodGet, path+"?poll_token="+url.QueryEscape(tok), "") }
	}
	checkToken := func(tok string) func(string) response {
		return func(path string) response {
			return h.post(path+"/check-status?poll_token="+url.QueryEscape(tok), "", "")
		}
	}
	cases := []read{
		{"sk with every scope", withKey(sk), 200, true},
		{"sk with every scope, check-status", checkKey(sk), 200, true},
		{"sk without orders:read", withKey(skStatus), 200, false},
		{"sk without orders:read, check-status", checkKey(skStatus), 200, false},
		{"pk", withKey(pk, fromShop()), 200, false},
		{"pk, check-status", checkKey(pk, fromShop()), 200, false},
		{"poll token", byToken(token), 200, false},
		{"poll token, check-status", checkToken(token), 200, false},
	}
	var bodies []map[string]any
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.do("/v1/orders/" + id)
			wantStatus(t, r, c.status)
			m := r.json(t)
			b, hasBuyer := m["buyer"]
			if hasBuyer != c.pii {
				t.Fatalf("buyer present %v, want %v: %s", hasBuyer, c.pii, r.body)
			}
			if c.pii {
				bm := b.(map[string]any)
				if bm["email"] != "anna@example.com" || bm["name"] != "Anna" || bm["phone"] != "+79991234567" {
					t.Errorf("buyer %v", bm)
				}
			}
			if strings.Contains(string(r.body), "anna@example.com") != c.pii {
				t.Errorf("e-mail exposure %v, want %v: %s", !c.pii, c.pii, r.body)
			}
			if m["id"] != id || m["status"] != "pending" || m["is_paid"] != false || m["livemode"] != false ||
				num(t, m, "total_price") != 300000 || num(t, m, "quantity") != 2 || m["event_id"] != "evt_concert" || m["ticket_tier_id"] != "evt_concert_ga" {
				t.Errorf("order status %s", r.body)
			}
			if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
			delete(m, "buyer")
			bodies = append(bodies, m)
		})
	}
	for i := 1; i < len(bodies); i++ {
		if fmt.Sprint(bodies[i]) != fmt.Sprint(bodies[0]) {
			t.Errorf("%s: status fields differ from %s:\n%v\n%v", cases[i].name, cases[0].name, bodies[i], bodies[0])
		}
	}

	// Bad tokens, missing credentials, other tenants.
	wantError(t, byToken("pt_wrong")("/v1/orders/"+id), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, checkToken("pt_wrong")("/v1/orders/"+id), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, byToken(token)("/v1/orders/"+other["id"].(string)), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, byToken("")("/v1/orders/"+id), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, h.do(http.MethodGet, "/v1/orders/"+id, ""), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, h.get("/v1/orders/"+id, skB), http.StatusNotFound, "not_found", "")
	wantError(t, h.post("/v1/orders/"+id+"/check-status", skB, ""), http.StatusNotFound, "not_found", "")
	wantError(t, h.get("/v1/orders/ord_doesnotexist00000000", sk), http.StatusNotFound, "not_found", "")
	wantError(t, h.get("/v1/orders/"+id, skNoStatus), http.StatusForbidden, "insufficient_scope", "scope")
	// A test key does not see the order from a live key of the same organizer.
	skLive, _ := h.key(orgA, auth.Secret, withEnv(ticketing.EnvLive))
	wantError(t, h.get("/v1/orders/"+id, skLive), http.StatusNotFound, "not_found", "")
	// A poll token with a key present is ignored: the key decides.
	if r := h.get("/v1/orders/"+id+"?poll_token=pt_wrong", skStatus); r.StatusCode != http.StatusOK {
		t.Errorf("key plus bad poll token: %d %s", r.StatusCode, r.body)
	}
}

func TestOrderRead_ExpiryWithoutCleanupReturnsStock(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)

	ga := h.mustOrder(sk, "exp-ga", gaBody("evt_concert_ga", 3))
	hold := h.mustHold(sk, holdBody("evt_theatre", "seat_B3"))
	seat := h.mustOrder(sk, "exp-seat", jsonBody("buyer", anna, "seat_reservation_ids", reservationIDs(hold)))
	r := h.get("/v1/orders/"+ga["id"].(string), sk)
	if exp, _ := r.json(t)["expires_at"].(string); exp == "" {
		t.Errorf("pending order without expires_at: %s", r.body)
	}
	if a := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, a, "qty_sold") != 3 || num(t, a, "qty_available") != 97 {
		t.Fatalf("GA while pending: %v", a)
	}

	h.clk.Advance(16 * time.Minute)
	// No timer runs; reading the order applies the expiry.
	for _, id := range []string{ga["id"].(string), seat["id"].(string)} {
		r := h.get("/v1/orders/"+id, sk)
		wantStatus(t, r, http.StatusOK)
		if m := r.json(t); m["status"] != "cancelled" || m["is_paid"] != false || m["expires_at"] != nil {
			t.Errorf("after 16 minutes: %s", r.body)
		}
	}
	if a := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, a, "qty_sold") != 0 || num(t, a, "qty_available") != 100 {
		t.Errorf("GA stock not returned: %v", a)
	}
	if st := h.seatStatuses(sk); st["seat_B3"] != "available" {
		t.Errorf("seat B3 after expiry: %s", st["seat_B3"])
	}
	// Paying an expired order is refused.
	wantError(t, h.simulate(sk, ga["id"].(string), ""), http.StatusConflict, "conflict", "")
	// The recorded expiry timer finds the work done and changes nothing.
	for _, tm := range h.timers.take() {
		if err := h.sales.Orders.HandleTimer(context.Background(), tm); err != nil {
			t.Fatalf("timer %+v: %v", tm, err)
		}
	}
	if a := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, a, "qty_sold") != 0 {
		t.Errorf("a second cancellation returned stock twice: %v", a)
	}
}

func TestOrderExpiry_TimerCancelsAndReturnsStock(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	o := h.mustOrder(sk, "timer-1", gaBody("evt_concert_ga", 4))
	id := o["id"].(string)
	var expiry *ticketing.Timer
	for _, tm := range h.timers.take() {
		if tm.Kind == ticketing.TimerOrderExpiry && tm.OrderID == id {
			tm := tm
			expiry = &tm
		}
	}
	if expiry == nil || expiry.Due.Sub(t0) < 14*time.Minute || expiry.Due.Sub(t0) > 16*time.Minute {
		t.Fatalf("expiry timer %+v, want one due in about 15 minutes", expiry)
	}
	// Early delivery: re-scheduled, order untouched.
	if err := h.sales.Orders.HandleTimer(context.Background(), *expiry); err != nil {
		t.Fatal(err)
	}
	if again := h.timers.take(); len(again) != 1 || again[0].Kind != ticketing.TimerOrderExpiry {
		t.Errorf("early timer re-scheduled as %+v", again)
	}
	if stored, _ := h.st.Orders.GetOrder(context.Background(), id); stored.Status != ticketing.OrderPending {
		t.Fatalf("early timer changed the order to %s", stored.Status)
	}
	h.clk.Advance(15 * time.Minute)
	if err := h.sales.Orders.HandleTimer(context.Background(), *expiry); err != nil {
		t.Fatal(err)
	}
	if stored, _ := h.st.Orders.GetOrder(context.Background(), id); stored.Status != ticketing.OrderCancelled {
		t.Fatalf("timer left the order %s", stored.Status)
	}
	if a := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, a, "qty_sold") != 0 {
		t.Errorf("GA stock after the expiry timer: %v", a)
	}
}

func TestSimulatePayment_KeysAndTransitions(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	skLive, _ := h.key(orgA, auth.Secret, withEnv(ticketing.EnvLive))
	skB, _ := h.key(orgB, auth.Secret)

	o := h.mustOrder(sk, "sim-1", gaBody("evt_concert_ga", 1))
	id := o["id"].(string)

	wantError(t, h.post("/v1/orders/"+id+"/simulate-payment", pk, "", fromShop()), http.StatusForbidden, "forbidden", "")
	// A live key cannot simulate, whatever the order (a live order cannot even be created in tests).
	wantError(t, h.post("/v1/orders/"+id+"/simulate-payment", skLive, ""), http.StatusUnprocessableEntity, "unsupported", "")
	wantError(t, h.post("/v1/orders/ord_doesnotexist00000000/simulate-payment", skLive, ""), http.StatusUnprocessableEntity, "unsupported", "")
	wantError(t, h.post("/v1/orders/"+id+"/simulate-payment", skB, ""), http.StatusNotFound, "not_found", "")
	wantError(t, h.simulate(sk, "ord_doesnotexist00000000", ""), http.StatusNotFound, "not_found", "")
	wantError(t, h.simulate(sk, id, "refunded"), http.StatusBadRequest, "invalid_request", "outcome")
	wantError(t, h.post("/v1/orders/"+id+"/simulate-payment", sk, `{"outcome":""}`), http.StatusBadRequest, "invalid_request", "outcome")
	if r := h.get("/v1/orders/"+id, sk); r.json(t)["status"] != "pending" {
		t.Fatalf("rejected simulations changed the order: %s", r.body)
	}

	paid := h.mustPay(sk, id)
	if paid["buyer"] == nil {
		t.Errorf("simulate with an orders:read secret key omits buyer: %v", paid)
	}
	// paid again: 200, unchanged.
	r := h.simulate(sk, id, "paid")
	wantStatus(t, r, http.StatusOK)
	if again := r.json(t); again["status"] != "paid" || again["paid_at"] != paid["paid_at"] {
		t.Errorf("paid twice %s", r.body)
	}
	wantError(t, h.simulate(sk, id, "cancelled"), http.StatusConflict, "conflict", "")

	// cancelled: cancelled again is 200, paid is 409.
	c := h.mustOrder(sk, "sim-2", gaBody("evt_concert_ga", 1))
	cid := c["id"].(string)
	r = h.simulate(sk, cid, "cancelled")
	wantStatus(t, r, http.StatusOK)
	if r.json(t)["status"] != "cancelled" || r.json(t)["is_paid"] != false {
		t.Fatalf("cancel %s", r.body)
	}
	wantStatus(t, h.simulate(sk, cid, "cancelled"), http.StatusOK)
	wantError(t, h.simulate(sk, cid, "paid"), http.StatusConflict, "conflict", "")
	if a := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, a, "qty_sold") != 1 {
		t.Errorf("qty_sold %v, want 1 (paid kept, cancelled returned)", a["qty_sold"])
	}
}

var ticketNumberRE = regexp.MustCompile(`^TIX-[2-9A-HJ-NP-Z]{6}$`)

func TestTickets_OnlyForPaidOrdersWithDistinctNumbersAndQR(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	skB, _ := h.key(orgB, auth.Secret)
	skNoRead, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersStatus, auth.ScopeOrdersWrite))

	o := h.mustOrder(sk, "tix-1", gaBody("evt_concert_ga", 3))
	id := o["id"].(string)
	wantError(t, h.get("/v1/orders/"+id+"/tickets", sk), http.StatusConflict, "conflict", "") // pending
	h.mustPay(sk, id)

	wantError(t, h.get("/v1/orders/"+id+"/tickets", pk, fromShop()), http.StatusForbidden, "forbidden", "")
	wantError(t, h.get("/v1/orders/"+id+"/tickets", skNoRead), http.StatusForbidden, "insufficient_scope", "scope")
	wantError(t, h.get("/v1/orders/"+id+"/tickets", skB), http.StatusNotFound, "not_found", "")

	r := h.get("/v1/orders/"+id+"/tickets", sk)
	wantStatus(t, r, http.StatusOK)
	tk := r.json(t)
	if tk["order_id"] != id || tk["status"] != "paid" || tk["event_id"] != "evt_concert" || num(t, tk, "quantity") != 3 {
		t.Errorf("tickets %s", r.body)
	}
	orderNumber, _ := tk["ticket_number"].(string)
	seen := map[string]bool{orderNumber: true}
	if !ticketNumberRE.MatchString(orderNumber) {
		t.Errorf("order ticket_number %q", orderNumber)
	}
	tickets := tk["tickets"].([]any)
	if len(tickets) != 3 {
		t.Fatalf("%d tickets, want one per unit (3)", len(tickets))
	}
	for _, x := range tickets {
		xm := x.(map[string]any)
		n, _ := xm["ticket_number"].(string)
		if !ticketNumberRE.MatchString(n) || seen[n] {
			t.Errorf("ticket number %q malformed or repeated", n)
		}
		seen[n] = true
		if xm["status"] != "issued" || xm["seat"] != nil {
			t.Errorf("GA ticket %v", xm)
		}
	}
	var qr map[string]any
	if err := json.Unmarshal([]byte(tk["qr_payload"].(string)), &qr); err != nil {
		t.Fatalf("qr_payload is not a JSON string: %v: %v", tk["qr_payload"], err)
	}
	if qr["order_id"] != id || qr["ticket_number"] != orderNumber || qr["event_id"] != "evt_concert" {
		t.Errorf("qr_payload %v", qr)
	}
	// Reading again gives the same numbers: they are issued once.
	again := h.get("/v1/orders/"+id+"/tickets", sk)
	if string(again.body) != string(r.body) {
		t.Errorf("tickets changed between reads:\n%s\n%s", r.body, again.body)
	}

	// Another order never reuses a number.
	o2 := h.mustOrder(sk, "tix-2", gaBody("evt_concert_ga", 2))
	h.mustPay(sk, o2["id"].(string))
	r = h.get("/v1/orders/"+o2["id"].(string)+"/tickets", sk)
	wantStatus(t, r, http.StatusOK)
	for _, x := range r.json(t)["tickets"].([]any) {
		if n := x.(map[string]any)["ticket_number"].(string); seen[n] {
			t.Errorf("number %s reused across orders", n)
		}
	}

	// cancelled and refunded: 409.
	c := h.mustOrder(sk, "tix-3", gaBody("evt_concert_ga", 1))
	wantStatus(t, h.simulate(sk, c["id"].(string), "cancelled"), http.StatusOK)
	wantError(t, h.get("/v1/orders/"+c["id"].(string)+"/tickets", sk), http.StatusConflict, "conflict", "")
	wantStatus(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusOK)
	h.clk.Advance(time.Minute)
	wantError(t, h.get("/v1/orders/"+id+"/tickets", sk), http.StatusConflict, "conflict", "")
}

func TestRefund_PreconditionsAndSettlementByTimer(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	skB, _ := h.key(orgB, auth.Secret)
	ctx := context.Background()

	o := h.mustOrder(sk, "rf-1", gaBody("evt_concert_ga", 2))
	id := o["id"].(string)
	wantError(t, h.get("/v1/orders/"+id+"/refund", sk), http.StatusNotFound, "not_found", "")
	wantError(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusConflict, "conflict", "") // pending
	wantError(t, h.get("/v1/orders/"+id+"/refund", sk), http.StatusNotFound, "not_found", "")     // the rejected attempt left nothing
	h.mustPay(sk, id)
	wantError(t, h.get("/v1/orders/"+id+"/refund", sk), http.StatusNotFound, "not_found", "")

	wantError(t, h.post("/v1/orders/"+id+"/refund", sk, jsonBody("reason", strings.Repeat("x", 501))), http.StatusBadRequest, "invalid_request", "reason")
	wantError(t, h.post("/v1/orders/"+id+"/refund", sk, jsonBody("reason", strings.Repeat("я", 501))), http.StatusBadRequest, "invalid_request", "reason")
	wantError(t, h.post("/v1/orders/"+id+"/refund", pk, "", fromShop()), http.StatusForbidden, "forbidden", "")
	wantError(t, h.post("/v1/orders/"+id+"/refund", skB, ""), http.StatusNotFound, "not_found", "")
	wantError(t, h.get("/v1/orders/"+id+"/refund", sk), http.StatusNotFound, "not_found", "")
	h.timers.take()

	reason := strings.Repeat("я", 500) // 500 characters (1000 bytes) is allowed
	r := h.post("/v1/orders/"+id+"/refund", sk, jsonBody("reason", reason))
	wantStatus(t, r, http.StatusOK)
	rf := r.json(t)
	if rf["status"] != "pending" || rf["order_id"] != id || num(t, rf, "amount") != 300000 || rf["currency"] != "RUB" ||
		rf["reason"] != reason || rf["completed_at"] != nil {
		t.Fatalf("refund %s", r.body)
	}
	// In progress: 409 for another attempt; GET shows it; the order is still paid.
	wantError(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusConflict, "conflict", "")
	r = h.get("/v1/orders/"+id+"/refund", sk)
	wantStatus(t, r, http.StatusOK)
	if got := r.json(t); got["id"] != rf["id"] || got["status"] != "pending" {
		t.Errorf("GET refund while pending %s", r.body)
	}
	var settle *ticketing.Timer
	for _, tm := range h.timers.take() {
		if tm.Kind == ticketing.TimerRefundSettle && tm.OrderID == id {
			tm := tm
			settle = &tm
		}
	}
	if settle == nil {
		t.Fatal("no refund.settle timer was scheduled")
	}
	// Delivered early: nothing settles, the timer is sent on.
	if err := h.sales.Orders.HandleTimer(ctx, *settle); err != nil {
		t.Fatal(err)
	}
	if stored, _ := h.st.Orders.GetOrder(ctx, id); stored.Status != ticketing.OrderPaid || stored.Refund.Status != ticketing.RefundPending {
		t.Fatalf("early timer settled the refund: %s / %+v", stored.Status, stored.Refund)
	}
	if again := h.timers.take(); len(again) != 1 || again[0].Kind != ticketing.TimerRefundSettle {
		t.Errorf("early timer re-scheduled as %+v", again)
	}

	h.clk.Advance(settle.Due.Sub(h.clk.Now()) + time.Second)
	if stored, _ := h.st.Orders.GetOrder(ctx, id); stored.Status != ticketing.OrderPaid {
		t.Fatalf("refund settled before its timer ran: %s", stored.Status)
	}
	if err := h.sales.Orders.HandleTimer(ctx, *settle); err != nil {
		t.Fatal(err)
	}
	stored, _ := h.st.Orders.GetOrder(ctx, id)
	if stored.Status != ticketing.OrderRefunded || stored.Refund.Status != ticketing.RefundCompleted {
		t.Fatalf("after the settle timer: %s / %+v", stored.Status, stored.Refund)
	}
	// A duplicate delivery changes nothing.
	if err := h.sales.Orders.HandleTimer(ctx, *settle); err != nil {
		t.Fatal(err)
	}

	r = h.get("/v1/orders/"+id+"/refund", sk)
	wantStatus(t, r, http.StatusOK)
	done := r.json(t)
	if done["status"] != "completed" || done["completed_at"] == nil || done["id"] != rf["id"] || done["created_at"] != rf["created_at"] {
		t.Errorf("completed refund %s", r.body)
	}
	// is_paid is true only while the order is paid: the money went back.
	r = h.get("/v1/orders/"+id, sk)
	if m := r.json(t); m["status"] != "refunded" || m["is_paid"] != false {
		t.Errorf("order after refund %s", r.body)
	}
	r = h.get("/v1/orders?status=refunded", sk)
	if d := r.json(t)["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != id || d[0].(map[string]any)["is_paid"] != false {
		t.Errorf("order list after refund %s", r.body)
	}
	h.wantOrderEventNotPaid(ticketing.EventOrderRefunded, id)
	// Idempotent: refunding a refunded order echoes the completed refund.
	r = h.post("/v1/orders/"+id+"/refund", sk, jsonBody("reason", "again"))
	wantStatus(t, r, http.StatusOK)
	if echo := r.json(t); echo["id"] != rf["id"] || echo["status"] != "completed" || echo["reason"] != reason {
		t.Errorf("refund echo %s", r.body)
	}
	if a := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, a, "qty_sold") != 0 {
		t.Errorf("refunded stock not returned: %v", a)
	}
	// Cancelled orders cannot be refunded either.
	c := h.mustOrder(sk, "rf-2", gaBody("evt_concert_ga", 1))
	wantStatus(t, h.simulate(sk, c["id"].(string), "cancelled"), http.StatusOK)
	wantError(t, h.post("/v1/orders/"+c["id"].(string)+"/refund", sk, ""), http.StatusConflict, "conflict", "")
	wantError(t, h.get("/v1/orders/"+c["id"].(string)+"/refund", sk), http.StatusNotFound, "not_found", "")
}

func TestRefund_SeatOrderFreesTheSeats(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	hold := h.mustHold(sk, holdBody("evt_theatre", "seat_A5"))
	o := h.mustOrder(sk, "rfs-1", jsonBody("buyer", anna, "seat_reservation_ids", reservationIDs(hold)))
	id := o["id"].(string)
	h.mustPay(sk, id)
	wantStatus(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusOK)
	if st := h.seatStatuses(sk); st["seat_A5"] != "unavailable" {
		t.Errorf("seat of a pending refund: %s", st["seat_A5"])
	}
	h.clk.Advance(time.Minute)
	for _, tm := range h.timers.take() {
		if err := h.sales.Orders.HandleTimer(context.Background(), tm); err != nil {
			t.Fatal(err)
		}
	}
	if st := h.seatStatuses(sk); st["seat_A5"] != "available" {
		t.Errorf("seat of a refunded order: %s", st["seat_A5"])
	}
	h.mustHold(sk, holdBody("evt_theatre", "seat_A5"))
}

func TestListOrders_OrderFiltersPagingAndPII(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	skList, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersList))
	pk := h.pkKey(orgA)
	skB, _ := h.key(orgB, auth.Secret)

	// Seven orders a second apart (newest last): concert x4, theatre standing x3.
	var created []string
	status := map[string]string{}
	for i := 0; i < 7; i++ {
		body := gaBody("evt_concert_ga", 1)
		if i%2 == 1 {
			body = jsonBody("buyer", anna, "standing_items", []any{map[string]any{"tier_id": "tier_stand", "qty": 1}})
		}
		o := h.mustOrder(sk, fmt.Sprintf("list-%d", i), body)
		created = append(created, o["id"].(string))
		status[o["id"].(string)] = "pending"
		h.clk.Advance(time.Second)
	}
	h.mustPay(sk, created[0])
	status[created[0]] = "paid"
	h.mustPay(sk, created[3])
	status[created[3]] = "paid"
	wantStatus(t, h.simulate(sk, created[2], "cancelled"), http.StatusOK)
	status[created[2]] = "cancelled"
	h.mustOrder(skB, "list-b", gaBody("evt_other_ga", 1)) // another organizer's

	newestFirst := make([]string, len(created))
	for i, id := range created {
		newestFirst[len(created)-1-i] = id
	}
	ids, page := h.listOrders(sk, "")
	if fmt.Sprint(ids) != fmt.Sprint(newestFirst) || page["has_more"] != false || page["next_cursor"] != nil {
		t.Fatalf("list %v has_more %v, want %v", ids, page["has_more"], newestFirst)
	}
	for _, d := range page["data"].([]any) {
		if d.(map[string]any)["buyer"] == nil {
			t.Errorf("orders:read key: list item without buyer: %v", d)
		}
	}
	_, page = h.listOrders(skList, "")
	for _, d := range page["data"].([]any) {
		if _, ok := d.(map[string]any)["buyer"]; ok {
			t.Errorf("key without orders:read sees buyer: %v", d)
		}
	}

	filter := func(keep func(i int, id string) bool) []string {
		var out []string
		for i := len(created) - 1; i >= 0; i-- {
			if keep(i, created[i]) {
				out = append(out, created[i])
			}
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"status=paid", filter(func(_ int, id string) bool { return status[id] == "paid" })},
		{"status=pending", filter(func(_ int, id string) bool { return status[id] == "pending" })},
		{"status=cancelled", filter(func(_ int, id string) bool { return status[id] == "cancelled" })},
		{"status=refunded", nil},
		{"event_id=evt_theatre", filter(func(i int, _ string) bool { return i%2 == 1 })},
		{"event_id=evt_concert&status=pending", filter(func(i int, id string) bool { return i%2 == 0 && status[id] == "pending" })},
		{"event_id=evt_other", nil},
		{"created_after=" + url.QueryEscape(t0.Add(5*time.Second).Format(time.RFC3339)), []string{created[6], created[5]}},
	} {
		t.Run(c.query, func(t *testing.T) {
			got, _ := h.listOrders(sk, c.query)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s: %v, want %v", c.query, got, c.want)
			}
		})
	}

	// Paging: limit 3, cursor, no duplicates, everything once.
	for _, q := range []string{"", "&event_id=evt_concert", "&status=pending"} {
		var all []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("paging does not end")
			}
			query := "limit=3" + q
			if cursor != "" {
				query += "&cursor=" + url.QueryEscape(cursor)
			}
			got, page := h.listOrders(sk, query)
			if len(got) > 3 {
				t.Fatalf("page of %d with limit 3", len(got))
			}
			all = append(all, got...)
			next, _ := page["next_cursor"].(string)
			if (next != "") != (page["has_more"] == true) {
				t.Fatalf("has_more %v with next_cursor %q", page["has_more"], next)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		full, _ := h.listOrders(sk, strings.TrimPrefix(q, "&"))
		if fmt.Sprint(all) != fmt.Sprint(full) {
			t.Errorf("paged %q: %v, want %v", q, all, full)
		}
		if cursor != "" {
			// A cursor only fits the query it came from.
			wantError(t, h.get("/v1/orders?limit=3&status=refunded&cursor="+url.QueryEscape(cursor), sk), http.StatusBadRequest, "invalid_request", "cursor")
		}
	}

	for _, bad := range []struct{ query, param string }{
		{"cursor=garbage", "cursor"},
		{"limit=0", "limit"},
		{"limit=101", "limit"},
		{"status=shipped", "status"},
		{"created_after=yesterday", "created_after"},
		{"nope=1", "nope"},
	} {
		wantError(t, h.get("/v1/orders?"+bad.query, sk), http.StatusBadRequest, "invalid_request", bad.param)
	}
	wantError(t, h.get("/v1/orders", pk, fromShop()), http.StatusForbidden, "forbidden", "")
	noList, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersRead))
	wantError(t, h.get("/v1/orders", noList, fromShop()), http.StatusForbidden, "insufficient_scope", "scope")
	if got, _ := h.listOrders(skB, ""); len(got) != 1 {
		t.Errorf("organizer B lists %v", got)
	}
}

func TestListOrders_ExpiredPendingOrdersListAsCancelled(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	o := h.mustOrder(sk, "lexp-1", gaBody("evt_concert_ga", 1))
	id := o["id"].(string)
	h.clk.Advance(16 * time.Minute)
	// No timer ran and nobody read the order: the list still shows it as it is now.
	if got, _ := h.listOrders(sk, "status=cancelled"); fmt.Sprint(got) != fmt.Sprint([]string{id}) {
		t.Errorf("status=cancelled: %v, want the expired order %s", got, id)
	}
	if got, _ := h.listOrders(sk, "status=pending"); len(got) != 0 {
		t.Errorf("status=pending lists the expired order: %v", got)
	}
	_, page := h.listOrders(sk, "")
	if d := page["data"].([]any); len(d) != 1 || d[0].(map[string]any)["status"] != "cancelled" {
		t.Errorf("unfiltered list: %v", d)
	}
}
