package api_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

var anna = map[string]any{"email": "anna@example.com", "name": "Anna", "phone": "+79991234567"}

// gaBody is a general-admission order for qty units of tier, plus extra fields.
func gaBody(tier string, qty int, extra ...any) string {
	return jsonBody(append([]any{"buyer", anna, "tier_id", tier, "quantity", qty}, extra...)...)
}

// mustOrder creates an order that must be new (201) and returns its body.
func (h *harness) mustOrder(secret, key, body string, opts ...reqOpt) map[string]any {
	h.t.Helper()
	r := h.post("/v1/orders", secret, body, append([]reqOpt{idem(key)}, opts...)...)
	wantStatus(h.t, r, http.StatusCreated)
	return r.json(h.t)
}

// simulate runs simulate-payment with outcome ("" = default) and returns the response.
func (h *harness) simulate(secret, id, outcome string) response {
	h.t.Helper()
	body := ""
	if outcome != "" {
		body = jsonBody("outcome", outcome)
	}
	return h.post("/v1/orders/"+id+"/simulate-payment", secret, body)
}

func (h *harness) mustPay(secret, id string) map[string]any {
	h.t.Helper()
	r := h.simulate(secret, id, "")
	wantStatus(h.t, r, http.StatusOK)
	o := r.json(h.t)
	if o["status"] != "paid" || o["is_paid"] != true || o["paid_at"] == nil {
		h.t.Fatalf("simulate paid: %s", r.body)
	}
	return o
}

// listOrderIDs returns the ids of GET /v1/orders?query and the page body.
func (h *harness) listOrders(secret, query string) ([]string, map[string]any) {
	h.t.Helper()
	r := h.get("/v1/orders?"+query, secret)
	wantStatus(h.t, r, http.StatusOK)
	m := r.json(h.t)
	var ids []string
	for _, d := range m["data"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	return ids, m
}

func TestOrder_SeatsFromHoldThenPaidSoldWithSeatedTickets(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	sk2, _ := h.key(orgA, auth.Secret)

	hold := h.mustHold(sk, holdBody("evt_theatre", "seat_A3", "seat_C2"))
	rids := reservationIDs(hold)
	o := h.mustOrder(sk, "seat-1", jsonBody("buyer", anna, "seat_reservation_ids", rids, "return_url", "https://shop.example/done"))
	if o["status"] != "pending" || num(t, o, "base_price") != 800000 || num(t, o, "total_price") != 800000 || o["type"] != "ticket" || o["environment"] != "test" {
		t.Fatalf("order %v", o)
	}
	id := o["id"].(string)

	// The reservations are used up: another key cannot take the seats, nor can the same reservations be ordered again.
	wantError(t, h.post("/v1/seat-holds", sk2, holdBody("evt_theatre", "seat_A3")), http.StatusConflict, "seat_conflict", "seat_ids[0]")
	wantError(t, h.post("/v1/orders", sk2, jsonBody("buyer", anna, "seat_reservation_ids", rids), idem("seat-2")), http.StatusConflict, "seat_conflict", "seat_reservation_ids")

	h.mustPay(sk, id)
	// Sold is final: long after the hold and the order's payment window, the seats stay taken.
	h.clk.Advance(time.Hour)
	st := h.seatStatuses(sk)
	if st["seat_A3"] != "unavailable" || st["seat_C2"] != "unavailable" || st["seat_A4"] != "available" {
		t.Errorf("after payment: %v", st)
	}
	box := h.tierAvailability(sk, "evt_theatre", "tier_box")
	if num(t, box, "qty_sold") != 1 || num(t, box, "qty_available") != 4 {
		t.Errorf("tier_box after a paid seat: %v", box)
	}
	wantError(t, h.post("/v1/seat-holds", sk2, holdBody("evt_theatre", "seat_C2")), http.StatusConflict, "seat_conflict", "seat_ids[0]")

	r := h.get("/v1/orders/"+id+"/tickets", sk)
	wantStatus(t, r, http.StatusOK)
	tk := r.json(t)
	tickets := tk["tickets"].([]any)
	if len(tickets) != 2 || num(t, tk, "quantity") != 2 {
		t.Fatalf("tickets %s", r.body)
	}
	type seat struct {
		Label, ZoneName, Row, SeatCode string
		Number                         int
	}
	var got []seat
	for _, x := range tickets {
		s, ok := x.(map[string]any)["seat"].(map[string]any)
		if !ok {
			t.Fatalf("seated ticket without seat: %v", x)
		}
		got = append(got, seat{s["label"].(string), s["zone_name"].(string), fmt.Sprint(s["row"]), fmt.Sprint(s["seat_code"]), int(num(t, s, "number"))})
	}
	want := []seat{{"A-3", "Stalls", "A", "seat_A3", 3}, {"C-2", "Stalls", "C", "seat_C2", 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ticket seats %+v, want %+v", got, want)
	}
}

func TestOrder_StandingItems(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)

	o := h.mustOrder(sk, "stand-1", jsonBody("buyer", anna, "standing_items", []any{map[string]any{"tier_id": "tier_stand", "qty": 3}}))
	if num(t, o, "total_price") != 300000 || num(t, o, "base_price") != 300000 {
		t.Fatalf("standing order %v", o)
	}
	stand := h.tierAvailability(sk, "evt_theatre", "tier_stand")
	if num(t, stand, "qty_sold") != 3 || num(t, stand, "qty_available") != 37 {
		t.Errorf("tier_stand after ordering 3: %v", stand)
	}
	h.mustPay(sk, o["id"].(string))
	r := h.get("/v1/orders/"+o["id"].(string)+"/tickets", sk)
	wantStatus(t, r, http.StatusOK)
	for _, x := range r.json(t)["tickets"].([]any) {
		if x.(map[string]any)["seat"] != nil {
			t.Errorf("standing ticket with a seat: %v", x)
		}
	}
	r = h.get("/v1/orders/"+o["id"].(string), sk)
	if got := r.json(t); got["ticket_tier_id"] != "tier_stand" || num(t, got, "quantity") != 3 {
		t.Errorf("order status %s", r.body)
	}
	// GET /tiers marks the standing tier as belonging to the seating map...
	r = h.get("/v1/events/evt_theatre/tiers", sk)
	wantStatus(t, r, http.StatusOK)
	seating := map[string]any{}
	for _, x := range r.json(t)["data"].([]any) {
		seating[x.(map[string]any)["id"].(string)] = x.(map[string]any)["seating"]
	}
	if seating["tier_stand"] != true || seating["tier_stalls"] != true {
		t.Errorf("seating of the theatre's tiers %v, want true for the standing and the seated tier", seating)
	}
	// ...and tier_id + quantity of it is the one-item standing_items it means.
	two := h.mustOrder(sk, "stand-2", gaBody("tier_stand", 2))
	if num(t, two, "total_price") != 200000 {
		t.Fatalf("tier_id order of a standing tier %v", two)
	}
	if stand := h.tierAvailability(sk, "evt_theatre", "tier_stand"); num(t, stand, "qty_sold") != 5 {
		t.Errorf("tier_stand after ordering 3 + 2: %v", stand)
	}
	r = h.get("/v1/orders/"+two["id"].(string), sk)
	if got := r.json(t); got["ticket_tier_id"] != "tier_stand" || num(t, got, "quantity") != 2 {
		t.Errorf("order status %s", r.body)
	}
	// A GA tier is not a standing item.
	wantError(t, h.post("/v1/orders", sk, jsonBody("buyer", anna, "standing_items", []any{map[string]any{"tier_id": "evt_concert_ga", "qty": 1}}), idem("stand-3")),
		http.StatusBadRequest, "invalid_request", "standing_items[0].tier_id")
	// A seated tier is ordered through holds.
	wantError(t, h.post("/v1/orders", sk, gaBody("tier_stalls", 1), idem("stand-4")), http.StatusBadRequest, "invalid_request", "tier_id")
}

func TestOrder_RejectedRequests(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	theatreHold := h.mustHold(sk, holdBody("evt_theatre", "seat_B1"))
	rid := reservationIDs(theatreHold)[0]

	cases := []struct {
		name   string
		noKey  bool
		body   string
		status int
		code   string
		param  string
	}{
		{"missing Idempotency-Key", true, gaBody("evt_concert_ga", 1), 400, "invalid_request", "Idempotency-Key"},
		{"no selection", false, jsonBody("buyer", anna, "event_id", "evt_concert"), 400, "invalid_request", "tier_id"},
		{"two selections", false, jsonBody("buyer", anna, "tier_id", "evt_concert_ga", "seat_reservation_ids", []string{rid}), 400, "invalid_request", "seat_reservation_ids"},
		{"missing buyer", false, jsonBody("tier_id", "evt_concert_ga", "quantity", 1), 400, "invalid_request", "buyer"},
		{"missing buyer.email", false, jsonBody("buyer", map[string]any{"name": "Anna"}, "tier_id", "evt_concert_ga"), 400, "invalid_request", "buyer.email"},
		{"invalid buyer.email", false, jsonBody("buyer", map[string]any{"email": "anna at example"}, "tier_id", "evt_concert_ga"), 400, "invalid_request", "buyer.email"},
		{"buyer.email without domain dot", false, jsonBody("buyer", map[string]any{"email": "anna@localhost"}, "tier_id", "evt_concert_ga"), 400, "invalid_request", "buyer.email"},
		{"buyer.email at a domain literal", false, jsonBody("buyer", map[string]any{"email": "a@[127.0.0.1]"}, "tier_id", "evt_concert_ga"), 400, "invalid_request", "buyer.email"},
		{"buyer.email at a quoted domain literal", false, jsonBody("buyer", map[string]any{"email": "anna@[IPv6:2001:db8::1]"}, "tier_id", "evt_concert_ga"), 400, "invalid_request", "buyer.email"},
		{"quantity 0", false, gaBody("evt_concert_ga", 0), 400, "invalid_request", "quantity"},
		{"quantity 11", false, gaBody("evt_concert_ga", 11), 400, "invalid_request", "quantity"},
		{"standing qty 11", false, jsonBody("buyer", anna, "standing_items", []any{map[string]any{"tier_id": "tier_stand", "qty": 11}}), 400, "invalid_request", "standing_items[0].qty"},
		{"return_url not https", false, gaBody("evt_concert_ga", 1, "return_url", "http://shop.example/done"), 400, "invalid_request", "return_url"},
		{"return_url relative", false, gaBody("evt_concert_ga", 1, "return_url", "/done"), 400, "invalid_request", "return_url"},
		{"unknown field", false, gaBody("evt_concert_ga", 1, "coupon", "X"), 400, "invalid_request", "coupon"},
		{"quantity of wrong type", false, jsonBody("buyer", anna, "tier_id", "evt_concert_ga", "quantity", "2"), 400, "invalid_request", "quantity"},
		{"buyer.email of wrong type", false, jsonBody("buyer", map[string]any{"email": 5}, "tier_id", "evt_concert_ga"), 400, "invalid_request", "buyer.email"},
		{"free tier", false, gaBody("evt_free_ga", 1), 422, "unsupported", ""},
		{"payment_method card", false, gaBody("evt_concert_ga", 1, "payment_method", "card"), 422, "unsupported", "payment_method"},
		{"reservations of another event than event_id", false, jsonBody("buyer", anna, "seat_reservation_ids", []string{rid}, "event_id", "evt_concert"), 422, "unsupported", "seat_reservation_ids"},
		{"sales ended", false, gaBody("evt_ended_ga", 1), 410, "sales_closed", ""},
		{"tier not on sale yet", false, gaBody("evt_concert_vip", 1), 410, "sales_closed", ""},
		{"other organizer's tier", false, gaBody("evt_other_ga", 1), 404, "not_found", "tier_id"},
		{"unknown tier", false, gaBody("tier_nope", 1), 404, "not_found", "tier_id"},
		{"unknown reservation", false, jsonBody("buyer", anna, "seat_reservation_ids", []string{rid, "rsv_AAAAAAAAAAAAAAAAAAAA00"}), 404, "not_found", "seat_reservation_ids[1]"},
		{"malformed reservation", false, jsonBody("buyer", anna, "seat_reservation_ids", []string{"rsv_x"}), 404, "not_found", "seat_reservation_ids[0]"},
		{"series tier without occurrence_id", false, gaBody("evt_series_ga", 1), 400, "invalid_request", "occurrence_id"},
		{"unknown occurrence", false, gaBody("evt_series_ga", 1, "occurrence_id", "occ_9"), 404, "not_found", "occurrence_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var opts []reqOpt
			if !c.noKey {
				opts = append(opts, idem("rejected "+c.name))
			}
			wantError(t, h.post("/v1/orders", sk, c.body, opts...), c.status, c.code, c.param)
		})
	}
	// Nothing was created and no stock was taken.
	if ids, _ := h.listOrders(sk, ""); len(ids) != 0 {
		t.Errorf("rejected requests created orders %v", ids)
	}
	if ga := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, ga, "qty_sold") != 0 {
		t.Errorf("rejected requests took stock: %v", ga)
	}
	// A request rejected after its key was bound (while pricing) frees the key:
	// corrected, the same key creates the order.
	h.mustOrder(sk, "rejected other organizer's tier", gaBody("evt_concert_ga", 1))
	h.mustOrder(sk, "rejected free tier", gaBody("evt_concert_ga", 1))
}

func TestOrder_InsufficientStockIs409WithParam(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	// VIP (capacity 10) goes on sale in a day.
	wantError(t, h.post("/v1/orders", sk, gaBody("evt_concert_vip", 1), idem("vip-early")), http.StatusGone, "sales_closed", "")
	h.clk.Advance(day(1))

	h.mustOrder(sk, "vip-1", gaBody("evt_concert_vip", 9))
	wantError(t, h.post("/v1/orders", sk, gaBody("evt_concert_vip", 2), idem("vip-2")), http.StatusConflict, "conflict", "tier_id")
	h.mustOrder(sk, "vip-3", gaBody("evt_concert_vip", 1))
	wantError(t, h.post("/v1/orders", sk, gaBody("evt_concert_vip", 1), idem("vip-4")), http.StatusConflict, "conflict", "tier_id")
	vip := h.tierAvailability(sk, "evt_concert", "evt_concert_vip")
	if num(t, vip, "qty_sold") != 10 || num(t, vip, "qty_available") != 0 || vip["sold_out"] != true {
		t.Errorf("VIP after selling out: %v", vip)
	}
	// The failed key was not bound: it works once stock returns.
	ids, _ := h.listOrders(sk, "")
	if len(ids) != 2 {
		t.Fatalf("orders %v, want 2", ids)
	}
	wantStatus(t, h.simulate(sk, ids[0], "cancelled"), http.StatusOK)
	h.mustOrder(sk, "vip-4", gaBody("evt_concert_vip", 1))

	// Standing items name the failing item.
	h.mustOrder(sk, "stand-1", jsonBody("buyer", anna, "standing_items", []any{map[string]any{"tier_id": "tier_stand", "qty": 10}}))
	for i := 2; i <= 4; i++ {
		h.mustOrder(sk, "stand-"+strconv.Itoa(i), jsonBody("buyer", anna, "standing_items", []any{map[string]any{"tier_id": "tier_stand", "qty": 10}}))
	}
	wantError(t, h.post("/v1/orders", sk, jsonBody("buyer", anna, "standing_items", []any{map[string]any{"tier_id": "tier_stand", "qty": 1}}), idem("stand-5")),
		http.StatusConflict, "conflict", "standing_items[0].tier_id")
}

func TestOrder_PromoCodes(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)

	r := h.post("/v1/orders/preview", sk, jsonBody("tier_id", "evt_concert_ga", "quantity", 2, "promo_code", "TEN"))
	wantStatus(t, r, http.StatusOK)
	p := r.json(t)
	promo, _ := p["promo"].(map[string]any)
	bd, _ := p["breakdown"].(map[string]any)
	if promo == nil || promo["code"] != "TEN" || num(t, promo, "discount") != 30000 {
		t.Errorf("preview promo %v", p["promo"])
	}
	if bd == nil || num(t, bd, "subtotal") != 300000 || num(t, bd, "discount") != 30000 || num(t, bd, "total") != 270000 {
		t.Errorf("preview breakdown %v", p["breakdown"])
	}
	if num(t, p, "base_price") != 300000 || num(t, p, "total_price") != 270000 || num(t, p, "service_fee") != 0 || num(t, p, "quantity") != 2 || p["is_free"] != false {
		t.Errorf("preview %s", r.body)
	}
	// The order charges the previewed total.
	o := h.mustOrder(sk, "promo-ten", gaBody("evt_concert_ga", 2, "promo_code", "TEN"))
	if num(t, o, "total_price") != 270000 || num(t, o, "base_price") != 300000 {
		t.Errorf("order with TEN %v", o)
	}

	for _, c := range []struct{ name, code string }{
		{"unknown code", "NOPE"},
		{"not started yet", "LATER"},
		{"other tier only", "VIPHALF"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, h.post("/v1/orders/preview", sk, jsonBody("tier_id", "evt_concert_ga", "promo_code", c.code)), http.StatusBadRequest, "invalid_request", "promo_code")
			wantError(t, h.post("/v1/orders", sk, gaBody("evt_concert_ga", 1, "promo_code", c.code), idem("promo-"+c.code)), http.StatusBadRequest, "invalid_request", "promo_code")
		})
	}

	// ONCE (max_uses 1): one order holds it, the next is refused.
	once := h.mustOrder(sk, "once-1", gaBody("evt_concert_ga", 1, "promo_code", "ONCE"))
	if num(t, once, "total_price") != 100000 {
		t.Errorf("ONCE order total %v, want 150000-50000", once["total_price"])
	}
	wantError(t, h.post("/v1/orders", sk, gaBody("evt_concert_ga", 1, "promo_code", "ONCE"), idem("once-2")), http.StatusBadRequest, "invalid_request", "promo_code")
	wantError(t, h.post("/v1/orders/preview", sk, jsonBody("tier_id", "evt_concert_ga", "promo_code", "ONCE")), http.StatusBadRequest, "invalid_request", "promo_code")
	// Cancelling the order gives the use back.
	r = h.simulate(sk, once["id"].(string), "cancelled")
	wantStatus(t, r, http.StatusOK)
	if r.json(t)["status"] != "cancelled" {
		t.Fatalf("cancel %s", r.body)
	}
	h.mustOrder(sk, "once-2", gaBody("evt_concert_ga", 1, "promo_code", "ONCE"))
	wantError(t, h.post("/v1/orders", sk, gaBody("evt_concert_ga", 1, "promo_code", "ONCE"), idem("once-3")), http.StatusBadRequest, "invalid_request", "promo_code")

	// LATER works once it has started.
	h.clk.Advance(day(2))
	r = h.post("/v1/orders/preview", sk, jsonBody("tier_id", "evt_concert_ga", "promo_code", "LATER"))
	wantStatus(t, r, http.StatusOK)
	if num(t, r.json(t), "total_price") != 120000 {
		t.Errorf("LATER preview %s", r.body)
	}
}

func TestOrderIdempotency_Table(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	body := gaBody("evt_concert_ga", 2)

	// none -> 201; pending -> 200 with the same body.
	r := h.post("/v1/orders", sk, body, idem("idem-1"))
	wantStatus(t, r, http.StatusCreated)
	created := r.json(t)
	id := created["id"].(string)
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", r.Header.Get("Cache-Control"))
	}
	r = h.post("/v1/orders", sk, body, idem("idem-1"))
	wantStatus(t, r, http.StatusOK)
	if replay := r.json(t); !reflect.DeepEqual(replay, created) {
		t.Errorf("pending replay differs:\n got %s\nwant %v", r.body, created)
	}
	// Another body with the key: conflict, and nothing new.
	wantError(t, h.post("/v1/orders", sk, gaBody("evt_concert_ga", 3), idem("idem-1")), http.StatusConflict, "conflict", "")

	// paid -> 200, same order in its current state.
	h.mustPay(sk, id)
	r = h.post("/v1/orders", sk, body, idem("idem-1"))
	wantStatus(t, r, http.StatusOK)
	paid := r.json(t)
	if paid["id"] != id || paid["status"] != "paid" || paid["poll_token"] != created["poll_token"] || !reflect.DeepEqual(paid["payment"], created["payment"]) {
		t.Errorf("paid replay %s", r.body)
	}

	// refunded -> 200.
	wantStatus(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusOK)
	h.clk.Advance(time.Minute)
	r = h.post("/v1/orders", sk, body, idem("idem-1"))
	wantStatus(t, r, http.StatusOK)
	if got := r.json(t); got["id"] != id || got["status"] != "refunded" {
		t.Errorf("refunded replay %s", r.body)
	}

	// cancelled -> 409 order_cancelled, also after the order expired on its own.
	c := h.mustOrder(sk, "idem-2", body)
	wantStatus(t, h.simulate(sk, c["id"].(string), "cancelled"), http.StatusOK)
	wantError(t, h.post("/v1/orders", sk, body, idem("idem-2")), http.StatusConflict, "order_cancelled", "")
	h.mustOrder(sk, "idem-3", body)
	h.clk.Advance(16 * time.Minute)
	wantError(t, h.post("/v1/orders", sk, body, idem("idem-3")), http.StatusConflict, "order_cancelled", "")

	// The key is scoped to the organizer and environment, not shared across them.
	skB, _ := h.key(orgB, auth.Secret)
	h.mustOrder(skB, "idem-1", gaBody("evt_other_ga", 2))
}

func TestOrderIdempotency_ProviderDownThenRetryCompletesTheSameOrder(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, key := h.key(orgA, auth.Secret)
	body := gaBody("evt_concert_ga", 2)

	h.payDown.Store(true)
	r := h.post("/v1/orders", sk, body, idem("down-1"))
	wantError(t, r, http.StatusBadGateway, "payment_provider_error", "")
	r = h.post("/v1/orders", sk, body, idem("down-1"))
	wantError(t, r, http.StatusBadGateway, "payment_provider_error", "")

	h.payDown.Store(false)
	r = h.post("/v1/orders", sk, body, idem("down-1"))
	wantStatus(t, r, http.StatusCreated)
	o := r.json(t)
	if o["status"] != "pending" || o["payment"].(map[string]any)["qr_payload"] == "" {
		t.Fatalf("order after provider recovery %s", r.body)
	}
	// The first attempt's order: bound to the key, one order only, stock taken once.
	rec, err := h.st.Idempotency.GetIdempotency(context.Background(), ticketing.Tenant{OrganizerID: orgA, Environment: key.Environment}, ticketing.IdemOrder, "down-1")
	if err != nil || rec == nil {
		t.Fatalf("idempotency record: %v %v", rec, err)
	}
	if o["id"] != rec.ResourceID {
		t.Errorf("retry completed order %v, key is bound to %s", o["id"], rec.ResourceID)
	}
	ids, _ := h.listOrders(sk, "")
	if len(ids) != 1 || ids[0] != o["id"] {
		t.Errorf("orders %v, want only %v", ids, o["id"])
	}
	if ga := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, ga, "qty_sold") != 2 {
		t.Errorf("stock taken %v times 2", ga["qty_sold"])
	}
	r = h.post("/v1/orders", sk, body, idem("down-1"))
	wantStatus(t, r, http.StatusOK)
	if r.json(t)["id"] != o["id"] {
		t.Errorf("replay %s", r.body)
	}
	h.mustPay(sk, o["id"].(string))
}

// The order_pending and in-flight rows of the table need another invocation that
// is half-way through: the store is driven directly to stand in for it.
func TestOrderIdempotency_PendingAndInFlightWhileAnotherInvocationHoldsTheLease(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, key := h.key(orgA, auth.Secret)
	ctx := context.Background()
	tenant := ticketing.Tenant{OrganizerID: orgA, Environment: key.Environment}
	body := gaBody("evt_concert_ga", 1)

	// The order exists without its QR (the provider failed) and another invocation
	// has since claimed the lease to fetch the QR.
	h.payDown.Store(true)
	wantError(t, h.post("/v1/orders", sk, body, idem("lease-1")), http.StatusBadGateway, "payment_provider_error", "")
	h.payDown.Store(false)
	rec, err := h.st.Idempotency.GetIdempotency(ctx, tenant, ticketing.IdemOrder, "lease-1")
	if err != nil || rec == nil {
		t.Fatalf("idempotency record: %v %v", rec, err)
	}
	other := *rec
	other.Lease, other.LeaseUntil = "other-invocation", h.clk.Now().Add(30*time.Second)
	if err := h.st.Idempotency.ClaimIdempotency(ctx, &other, rec.Lease); err != nil {
		t.Fatal(err)
	}
	r := h.post("/v1/orders", sk, body, idem("lease-1"))
	wantError(t, r, http.StatusConflict, "order_pending", "")
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 5 {
		t.Errorf("order_pending Retry-After %q, want about a second", r.Header.Get("Retry-After"))
	}
	// A different body is still a conflict, not order_pending.
	wantError(t, h.post("/v1/orders", sk, gaBody("evt_concert_ga", 2), idem("lease-1")), http.StatusConflict, "conflict", "")
	// The other invocation died: once its lease runs out, a retry completes the order.
	h.clk.Advance(31 * time.Second)
	r = h.post("/v1/orders", sk, body, idem("lease-1"))
	wantStatus(t, r, http.StatusCreated)
	if r.json(t)["id"] != rec.ResourceID {
		t.Errorf("completed %s, want %s", r.json(t)["id"], rec.ResourceID)
	}

	// An identical request in flight that has not written its order yet: 409 conflict.
	inflight := &ticketing.Idempotency{Tenant: tenant, Scope: ticketing.IdemOrder, Key: "lease-2", RequestHash: rec.RequestHash,
		ResourceID: "ord_InFlightInFlight0000", Lease: "in-flight", LeaseUntil: h.clk.Now().Add(30 * time.Second), CreatedAt: h.clk.Now()}
	if _, err := h.st.Idempotency.BeginIdempotency(ctx, inflight, h.clk.Now()); err != nil {
		t.Fatal(err)
	}
	wantError(t, h.post("/v1/orders", sk, body, idem("lease-2")), http.StatusConflict, "conflict", "")
	// It crashed before writing: after the lease a retry creates the order under the bound id.
	h.clk.Advance(31 * time.Second)
	r = h.post("/v1/orders", sk, body, idem("lease-2"))
	wantStatus(t, r, http.StatusCreated)
	if r.json(t)["id"] != inflight.ResourceID {
		t.Errorf("recovered order %v, want %s", r.json(t)["id"], inflight.ResourceID)
	}
}
