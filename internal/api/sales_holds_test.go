package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
)

// Helpers shared by the sales_*_test.go files.

const shopOrigin = "https://shop.example"

// fromShop is the Origin header of a storefront page allowed for pkKey keys.
func fromShop() reqOpt { return header("Origin", shopOrigin) }

// pkKey creates a publishable key of org bound to shopOrigin.
func (h *harness) pkKey(org string, opts ...keyOpt) string {
	h.t.Helper()
	secret, _ := h.key(org, auth.Publishable, append([]keyOpt{withOrigins(shopOrigin)}, opts...)...)
	return secret
}

func (h *harness) del(target, secret, body string, opts ...reqOpt) response {
	h.t.Helper()
	return h.do(http.MethodDelete, target, body, append([]reqOpt{bearer(secret)}, opts...)...)
}

// jsonBody marshals alternating keys and values into a JSON object.
func jsonBody(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func holdBody(event string, seats ...string) string {
	return jsonBody("event_id", event, "seat_ids", seats)
}

func releaseBody(rids ...string) string { return jsonBody("reservation_ids", rids) }

// mustHold posts a seat hold that must succeed and returns its body.
func (h *harness) mustHold(secret, body string, opts ...reqOpt) map[string]any {
	h.t.Helper()
	r := h.post("/v1/seat-holds", secret, body, opts...)
	wantStatus(h.t, r, http.StatusOK)
	return r.json(h.t)
}

// reservationIDs lists a hold's reservation ids in seat order.
func reservationIDs(hold map[string]any) []string { return holdSeats(hold, "reservation_id") }

// holdSeats lists field (seat_id, reservation_id...) of a hold's seats in seat order.
func holdSeats(hold map[string]any, field string) []string {
	var out []string
	for _, s := range hold["seats"].([]any) {
		out = append(out, s.(map[string]any)[field].(string))
	}
	return out
}

// seatStatuses maps seat id to status on the theatre's seating map.
func (h *harness) seatStatuses(secret string) map[string]string {
	h.t.Helper()
	r := h.get("/v1/events/evt_theatre/seating", secret)
	wantStatus(h.t, r, http.StatusOK)
	out := map[string]string{}
	for _, z := range r.json(h.t)["zones"].([]any) {
		zm := z.(map[string]any)
		seats, _ := zm["seats"].([]any)
		for _, s := range seats {
			sm := s.(map[string]any)
			out[sm["id"].(string)] = sm["status"].(string)
		}
	}
	return out
}

// tierAvailability returns the AvailabilityTier of tier on event.
func (h *harness) tierAvailability(secret, event, tier string, query ...string) map[string]any {
	h.t.Helper()
	target := "/v1/events/" + event + "/availability"
	if len(query) > 0 {
		target += "?" + strings.Join(query, "&")
	}
	r := h.get(target, secret)
	wantStatus(h.t, r, http.StatusOK)
	for _, x := range r.json(h.t)["tiers"].([]any) {
		if xm := x.(map[string]any); xm["id"] == tier {
			return xm
		}
	}
	h.t.Fatalf("availability of %s has no tier %s: %s", event, tier, r.body)
	return nil
}

// num reads a JSON number field as an int64.
func num(t *testing.T, m map[string]any, field string) int64 {
	t.Helper()
	f, ok := m[field].(float64)
	if !ok {
		t.Fatalf("%s is %T %v, want a number (in %v)", field, m[field], m[field], m)
	}
	return int64(f)
}

func TestSeatHold_TwoSeatsHeldShownUnavailableAndPriced(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)

	before := h.tierAvailability(sk, "evt_theatre", "tier_box")
	hold := h.mustHold(sk, holdBody("evt_theatre", "seat_A1", "seat_B2"))

	if id, _ := hold["hold_id"].(string); id == "" {
		t.Fatalf("no hold_id: %v", hold)
	}
	if num(t, hold, "total_base_price") != 500000+300000 {
		t.Errorf("total_base_price %v, want 800000 (box 500000 + stalls 300000)", hold["total_base_price"])
	}
	exp, err := time.Parse(time.RFC3339, hold["expires_at"].(string))
	if err != nil {
		t.Fatalf("expires_at %v: %v", hold["expires_at"], err)
	}
	if d := exp.Sub(t0); d < 14*time.Minute || d > 16*time.Minute {
		t.Errorf("expires_at %v is %v after now, want about 15 minutes", exp, d)
	}
	seats := hold["seats"].([]any)
	if len(seats) != 2 {
		t.Fatalf("seats %v, want 2", seats)
	}
	want := []struct {
		seat, label, tier string
		price             int64
	}{{"seat_A1", "A-1", "tier_box", 500000}, {"seat_B2", "B-2", "tier_stalls", 300000}}
	rids := map[string]bool{}
	for i, w := range want {
		s := seats[i].(map[string]any)
		if s["seat_id"] != w.seat || s["label"] != w.label || s["ticket_tier_id"] != w.tier || num(t, s, "price") != w.price ||
			s["zone_name"] != "Stalls" || s["zone_color"] != "#E91E63" {
			t.Errorf("seat %d: %v, want %+v in zone Stalls", i, s, w)
		}
		rid, _ := s["reservation_id"].(string)
		if rid == "" || rids[rid] {
			t.Errorf("seat %d: reservation_id %q missing or repeated", i, rid)
		}
		rids[rid] = true
	}

	st := h.seatStatuses(sk)
	if st["seat_A1"] != "unavailable" || st["seat_B2"] != "unavailable" || st["seat_A2"] != "available" || st["seat_B1"] != "available" {
		t.Errorf("seating after hold: %v", st)
	}
	after := h.tierAvailability(sk, "evt_theatre", "tier_box")
	if num(t, before, "qty_available") != 5 || num(t, after, "qty_available") != 4 {
		t.Errorf("tier_box qty_available before %v after %v, want 5 then 4", before["qty_available"], after["qty_available"])
	}
	if stalls := h.tierAvailability(sk, "evt_theatre", "tier_stalls"); num(t, stalls, "qty_available") != 9 {
		t.Errorf("tier_stalls qty_available %v, want 9", stalls["qty_available"])
	}
}

func TestSeatHold_ConflictIdempotencyAndExpiry(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk1, _ := h.key(orgA, auth.Secret)
	sk2, _ := h.key(orgA, auth.Secret)

	first := h.mustHold(sk1, holdBody("evt_theatre", "seat_A1", "seat_A2"), idem("hold-1"))

	// Another key: the held seat conflicts, named by its index.
	wantError(t, h.post("/v1/seat-holds", sk2, holdBody("evt_theatre", "seat_A1")), http.StatusConflict, "seat_conflict", "seat_ids[0]")
	wantError(t, h.post("/v1/seat-holds", sk2, holdBody("evt_theatre", "seat_C5", "seat_A2")), http.StatusConflict, "seat_conflict", "seat_ids[1]")
	// The failed request took nothing: C5 is still free.
	if st := h.seatStatuses(sk2); st["seat_C5"] != "available" {
		t.Errorf("a rejected hold left seat C5 %s", st["seat_C5"])
	}

	// Same key, same request (other key order and whitespace): the same hold, not seat_conflict.
	r := h.post("/v1/seat-holds", sk1, `{ "seat_ids": ["seat_A1","seat_A2"], "event_id": "evt_theatre" }`, idem("hold-1"))
	wantStatus(t, r, http.StatusOK)
	if replay := r.json(t); replay["hold_id"] != first["hold_id"] || fmt.Sprint(reservationIDs(replay)) != fmt.Sprint(reservationIDs(first)) {
		t.Errorf("replay %v, want hold %v", replay, first["hold_id"])
	}
	// Same key, another request: conflict.
	wantError(t, h.post("/v1/seat-holds", sk1, holdBody("evt_theatre", "seat_A3"), idem("hold-1")), http.StatusConflict, "conflict", "")
	// Without a key the caller's own held seat conflicts too.
	wantError(t, h.post("/v1/seat-holds", sk1, holdBody("evt_theatre", "seat_A1")), http.StatusConflict, "seat_conflict", "seat_ids[0]")

	// The hold expires: no cleanup runs, yet someone else can hold the seat.
	h.clk.Advance(16 * time.Minute)
	if st := h.seatStatuses(sk2); st["seat_A1"] != "available" {
		t.Errorf("expired hold still shows A1 %s", st["seat_A1"])
	}
	second := h.mustHold(sk2, holdBody("evt_theatre", "seat_A1"))
	if second["hold_id"] == first["hold_id"] {
		t.Fatal("expired hold returned again")
	}
	// The expired hold's key is free again: a new hold (which now conflicts on A1).
	wantError(t, h.post("/v1/seat-holds", sk1, holdBody("evt_theatre", "seat_A1", "seat_A2"), idem("hold-1")), http.StatusConflict, "seat_conflict", "seat_ids[0]")
	third := h.mustHold(sk1, holdBody("evt_theatre", "seat_A2"), idem("hold-1"))
	if third["hold_id"] == first["hold_id"] {
		t.Error("the expired hold's Idempotency-Key replayed the dead hold")
	}
}

func TestSeatHold_ReleaseOnlyTheCallersReservations(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk1, _ := h.key(orgA, auth.Secret)
	sk2, _ := h.key(orgA, auth.Secret)
	skB, _ := h.key(orgB, auth.Secret)

	hold := h.mustHold(sk1, holdBody("evt_theatre", "seat_B1", "seat_B2", "seat_B3"))
	rids := reservationIDs(hold)

	for _, other := range []string{sk2, skB} {
		r := h.del("/v1/seat-holds", other, releaseBody(rids...))
		wantStatus(t, r, http.StatusOK)
		if n := num(t, r.json(t), "released"); n != 0 {
			t.Errorf("another key released %d of the caller's reservations", n)
		}
	}
	if st := h.seatStatuses(sk1); st["seat_B1"] != "unavailable" || st["seat_B3"] != "unavailable" {
		t.Fatalf("after foreign release attempts: %v", st)
	}

	// Two of three, plus an unknown and a malformed id: only the two count.
	r := h.del("/v1/seat-holds", sk1, releaseBody(rids[0], rids[1], "rsv_AAAAAAAAAAAAAAAAAAAA00", "nonsense"))
	wantStatus(t, r, http.StatusOK)
	if n := num(t, r.json(t), "released"); n != 2 {
		t.Errorf("released %d, want 2", n)
	}
	st := h.seatStatuses(sk1)
	if st["seat_B1"] != "available" || st["seat_B2"] != "available" || st["seat_B3"] != "unavailable" {
		t.Errorf("after releasing B1 and B2: %v", st)
	}
	// Releasing again counts nothing; the freed seat can be held by another key.
	r = h.del("/v1/seat-holds", sk1, releaseBody(rids[0]))
	wantStatus(t, r, http.StatusOK)
	if n := num(t, r.json(t), "released"); n != 0 {
		t.Errorf("second release counted %d", n)
	}
	h.mustHold(sk2, holdBody("evt_theatre", "seat_B1"))

	wantError(t, h.del("/v1/seat-holds", sk1, `{}`), http.StatusBadRequest, "invalid_request", "reservation_ids")
	wantError(t, h.del("/v1/seat-holds", sk1, releaseBody()), http.StatusBadRequest, "invalid_request", "reservation_ids")
}

func TestSeatHold_BadRequests(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = fmt.Sprintf("seat_%c%d", 'A'+i/5, i%5+1)
	}
	cases := []struct {
		name   string
		body   string
		status int
		code   string
		param  string
	}{
		{"unknown seat names its index", holdBody("evt_theatre", "seat_A1", "seat_Z9"), 404, "not_found", "seat_ids[1]"},
		{"more than 10 seats", holdBody("evt_theatre", eleven...), 400, "invalid_request", "seat_ids"},
		{"no seats", holdBody("evt_theatre"), 400, "invalid_request", "seat_ids"},
		{"seat listed twice", holdBody("evt_theatre", "seat_A1", "seat_A1"), 400, "invalid_request", "seat_ids[1]"},
		{"missing event_id", jsonBody("seat_ids", []string{"seat_A1"}), 400, "invalid_request", "event_id"},
		{"sales ended", holdBody("evt_ended", "seat_A1"), 410, "sales_closed", ""},
		{"other organizer's event", holdBody("evt_other", "seat_A1"), 404, "not_found", "event_id"},
		{"unknown event", holdBody("evt_nope", "seat_A1"), 404, "not_found", "event_id"},
		{"series without occurrence_id", holdBody("evt_series", "seat_A1"), 400, "invalid_request", "occurrence_id"},
		{"occurrence_id on a single event", jsonBody("event_id", "evt_theatre", "occurrence_id", "occ_1", "seat_ids", []string{"seat_A1"}), 400, "invalid_request", "occurrence_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, h.post("/v1/seat-holds", sk, c.body), c.status, c.code, c.param)
		})
	}
	// None of the rejected requests held anything.
	for id, s := range h.seatStatuses(sk) {
		if s != "available" {
			t.Errorf("seat %s is %s after rejected holds", id, s)
		}
	}
}

func TestSeatHold_PublishableKeyConcurrentCapPerIP(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	pk2 := h.pkKey(orgA)
	sk, _ := h.key(orgA, auth.Secret)

	var holds []map[string]any
	for i := 1; i <= 3; i++ {
		holds = append(holds, h.mustHold(pk, holdBody("evt_theatre", fmt.Sprintf("seat_C%d", i)), fromShop()))
	}
	// A fourth concurrent hold from the same IP, even with another key of the organizer.
	for _, key := range []string{pk, pk2} {
		r := h.post("/v1/seat-holds", key, holdBody("evt_theatre", "seat_C4"), fromShop())
		wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
		ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || ra < 1 || ra > 15*60 {
			t.Errorf("Retry-After %q, want seconds until the oldest hold expires (<= 900)", r.Header.Get("Retry-After"))
		}
	}
	if st := h.seatStatuses(sk); st["seat_C4"] != "available" {
		t.Errorf("a capped hold took C4: %s", st["seat_C4"])
	}
	// Another IP is not capped by this one.
	h.mustHold(pk, holdBody("evt_theatre", "seat_B5"), fromShop(), remoteAddr("198.51.100.7:5000"))
	// A secret key is never capped per IP.
	h.mustHold(sk, holdBody("evt_theatre", "seat_B4"))

	// Releasing a hold frees its place under the cap.
	r := h.del("/v1/seat-holds", pk, releaseBody(reservationIDs(holds[0])...), fromShop())
	wantStatus(t, r, http.StatusOK)
	h.mustHold(pk, holdBody("evt_theatre", "seat_C4"), fromShop())
	wantError(t, h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_C5"), fromShop()), http.StatusTooManyRequests, "rate_limited", "")

	// Expired holds do not count.
	h.clk.Advance(16 * time.Minute)
	for i := 1; i <= 3; i++ {
		h.mustHold(pk, holdBody("evt_theatre", fmt.Sprintf("seat_A%d", i)), fromShop())
	}
}

func TestSeatHold_PublishableKeyCapFreedByReleasingAllSeatsOneByOne(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)

	two := h.mustHold(pk, holdBody("evt_theatre", "seat_C1", "seat_C2"), fromShop())
	h.mustHold(pk, holdBody("evt_theatre", "seat_C3"), fromShop())
	h.mustHold(pk, holdBody("evt_theatre", "seat_C4"), fromShop())
	// Release the first hold seat by seat, in two requests. While one seat is
	// still held the hold counts; after the second nothing of it is held any more.
	for i, rid := range reservationIDs(two) {
		r := h.del("/v1/seat-holds", pk, releaseBody(rid), fromShop())
		wantStatus(t, r, http.StatusOK)
		if num(t, r.json(t), "released") != 1 {
			t.Fatalf("release %s: %s", rid, r.body)
		}
		if i == 0 {
			wantError(t, h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_C5"), fromShop()), http.StatusTooManyRequests, "rate_limited", "")
		}
	}
	// Only two holds are alive, so a third is within the cap of 3.
	h.mustHold(pk, holdBody("evt_theatre", "seat_C5"), fromShop())
}

func TestSeatHold_PublishableKeyRatePerIP(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	seats := []string{}
	for r := 'A'; r <= 'C'; r++ {
		for n := 1; n <= 5; n++ {
			seats = append(seats, fmt.Sprintf("seat_%c%d", r, n))
		}
	}
	// 20 requests in the minute, each hold released at once so the concurrent cap never bites.
	for i := 0; i < 20; i++ {
		hold := h.mustHold(pk, holdBody("evt_theatre", seats[i%len(seats)]), fromShop())
		r := h.del("/v1/seat-holds", pk, releaseBody(reservationIDs(hold)...), fromShop())
		wantStatus(t, r, http.StatusOK)
		if num(t, r.json(t), "released") != 1 {
			t.Fatalf("release %d: %s", i, r.body)
		}
	}
	r := h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_A1"), fromShop())
	wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q, want 1..60 seconds (a one-minute window)", r.Header.Get("Retry-After"))
	}
	if r.Header.Get("X-RateLimit-Limit") == "" {
		t.Error("429 without X-RateLimit-* headers")
	}
	// Another client IP has its own budget.
	h.mustHold(pk, holdBody("evt_theatre", "seat_A1"), fromShop(), remoteAddr("198.51.100.7:5000"))
	// The next window admits the first IP again.
	h.clk.Advance(time.Minute)
	h.mustHold(pk, holdBody("evt_theatre", "seat_A2"), fromShop())
}
