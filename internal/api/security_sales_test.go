package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// A publishable key's Idempotency-Keys live in their own namespace (the key and
// the client's network): a storefront visitor can neither replay an sk key's
// order (and read its poll_token) nor pre-claim its key, nor another visitor's.
func TestIdempotency_PublishableKeysCannotCollideWithSecretKeysOrOtherVisitors(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	body := gaBody("evt_concert_ga", 1)

	// An sk order, then the same key and body from a pk key: a new order, not the sk one.
	skOrder := h.mustOrder(sk, "shared-1", body)
	r := h.post("/v1/orders", pk, body, idem("shared-1"), fromShop())
	wantStatus(t, r, http.StatusCreated)
	if got := r.json(t); got["id"] == skOrder["id"] || got["poll_token"] == skOrder["poll_token"] {
		t.Fatalf("a pk request replayed the sk order: %s", r.body)
	}
	// A pk request first cannot block the sk key with a different body.
	h.mustOrder(pk, "shared-2", gaBody("evt_concert_ga", 2), fromShop())
	h.mustOrder(sk, "shared-2", body)
	// Two visitors of the same storefront on different networks do not share keys.
	visitorA := h.mustOrder(pk, "shared-3", body, fromShop(), remoteAddr("198.51.100.7:5000"))
	r = h.post("/v1/orders", pk, body, idem("shared-3"), fromShop(), remoteAddr("203.0.113.9:5000"))
	wantStatus(t, r, http.StatusCreated)
	if r.json(t)["id"] == visitorA["id"] {
		t.Fatal("another visitor's network replayed visitor A's order")
	}
	// The same visitor's retry is still a replay, also from another address of its IPv6 /64.
	again := h.post("/v1/orders", pk, body, idem("shared-3"), fromShop(), remoteAddr("198.51.100.7:5001"))
	wantStatus(t, again, http.StatusOK)
	if again.json(t)["id"] != visitorA["id"] {
		t.Fatal("the visitor's own retry was not a replay")
	}
	v6 := h.mustOrder(pk, "shared-4", body, fromShop(), remoteAddr("[2001:db8:1:2::10]:5000"))
	again = h.post("/v1/orders", pk, body, idem("shared-4"), fromShop(), remoteAddr("[2001:db8:1:2:aaaa::1]:5000"))
	wantStatus(t, again, http.StatusOK)
	if again.json(t)["id"] != v6["id"] {
		t.Fatal("a retry from the same IPv6 /64 was not a replay")
	}

	// Seat holds: an sk hold's key replayed by a pk request is a new hold attempt, not the sk hold.
	skHold := h.post("/v1/seat-holds", sk, holdBody("evt_theatre", "seat_A1"), idem("hold-1"))
	wantStatus(t, skHold, http.StatusOK)
	r = h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_A1"), idem("hold-1"), fromShop())
	wantError(t, r, http.StatusConflict, "seat_conflict", "seat_ids[0]")
	// And a pk hold under a key does not block the sk key.
	h.mustHold(pk, holdBody("evt_theatre", "seat_A2"), idem("hold-2"), fromShop())
	h.mustHold(sk, holdBody("evt_theatre", "seat_A3"), idem("hold-2"))
}

// ordersFrom posts n general-admission orders of qty in parallel from the pk key
// and returns how many were created and how many refused with 429.
func (h *harness) ordersInParallel(pk, prefix string, n, qty int, opts ...reqOpt) (created, limited int, ids []string) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.post("/v1/orders", pk, gaBody("evt_concert_ga", qty), append([]reqOpt{idem(fmt.Sprintf("%s-%d", prefix, i)), fromShop()}, opts...)...)
			mu.Lock()
			defer mu.Unlock()
			switch r.StatusCode {
			case http.StatusCreated:
				created++
				ids = append(ids, r.json(h.t)["id"].(string))
			case http.StatusTooManyRequests:
				if code, _ := r.errorCode(h.t); code != "rate_limited" {
					h.t.Errorf("429 with code %q", code)
				}
				limited++
			default:
				h.t.Errorf("order: status %d: %s", r.StatusCode, r.body)
			}
		}()
	}
	wg.Wait()
	return created, limited, ids
}

// A publishable key's client (IP, IPv6 /64) keeps at most 3 pending orders and
// 10 units per event, however many requests it sends at once; the places come
// back when an order is paid, cancelled or expires. Secret keys are not capped.
func TestOrderCap_PublishableKeyPendingOrdersPerClientAndEvent(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)

	created, limited, ids := h.ordersInParallel(pk, "par", 12, 1)
	if created != 3 || limited != 9 {
		t.Fatalf("12 parallel pk orders from one IP: %d created, %d refused; want 3 and 9", created, limited)
	}
	if a := h.tierAvailability(sk, "evt_concert", "evt_concert_ga"); num(t, a, "qty_sold") != 3 {
		t.Fatalf("stock taken by capped orders: %v", a)
	}
	r := h.post("/v1/orders", pk, gaBody("evt_concert_ga", 1), idem("more"), fromShop())
	wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// An IPv6 client is counted per /64; another IP, another event and a secret key are not capped by this one.
	h.mustOrder(pk, "v6-a", gaBody("evt_concert_ga", 1), fromShop(), remoteAddr("[2001:db8::1]:1"))
	h.mustOrder(pk, "v6-b", gaBody("evt_concert_ga", 1), fromShop(), remoteAddr("[2001:db8::2]:1"))
	h.mustOrder(pk, "v6-c", gaBody("evt_concert_ga", 1), fromShop(), remoteAddr("[2001:db8::3]:1"))
	wantError(t, h.post("/v1/orders", pk, gaBody("evt_concert_ga", 1), idem("v6-d"), fromShop(), remoteAddr("[2001:db8::4]:1")),
		http.StatusTooManyRequests, "rate_limited", "")
	h.mustOrder(pk, "v6-other", gaBody("evt_concert_ga", 1), fromShop(), remoteAddr("[2001:db8:0:1::1]:1"))
	h.mustOrder(pk, "other-ip", gaBody("evt_concert_ga", 1), fromShop(), remoteAddr("198.51.100.7:5000"))
	h.mustOrder(pk, "other-event", jsonBody("buyer", anna, "standing_items", []any{map[string]any{"tier_id": "tier_stand", "qty": 2}}), fromShop())
	for i := range 5 {
		h.mustOrder(sk, fmt.Sprintf("sk-%d", i), gaBody("evt_concert_ga", 1))
	}

	// Paid, cancelled: the place comes back at once.
	h.mustPay(sk, ids[0])
	h.mustOrder(pk, "after-paid", gaBody("evt_concert_ga", 1), fromShop())
	wantError(t, h.post("/v1/orders", pk, gaBody("evt_concert_ga", 1), idem("after-paid-2"), fromShop()), http.StatusTooManyRequests, "rate_limited", "")
	wantStatus(t, h.simulate(sk, ids[1], "cancelled"), http.StatusOK)
	h.mustOrder(pk, "after-cancel", gaBody("evt_concert_ga", 1), fromShop())
	// Expired: every pending order lapses. Even before any timer or read expires
	// them, a client at its cap finds its overdue orders, expires them (once) and
	// gets their places back.
	h.clk.Advance(16 * time.Minute)
	created, limited, _ = h.ordersInParallel(pk, "again", 6, 1)
	if created != 3 || limited != 3 {
		t.Fatalf("after expiry: %d created, %d refused; want 3 and 3", created, limited)
	}
	if stored, _ := h.st.Orders.GetOrder(context.Background(), ids[2]); stored.Status != ticketing.OrderCancelled {
		t.Fatalf("an overdue counted order is %s, want cancelled", stored.Status)
	}
}

// Units count too: one client cannot take a tier's stock with a few large orders
// (today: 16 orders of 10 emptied a tier of 150), nor by holding seats and
// ordering them again and again: seats of unpaid orders stay counted.
func TestOrderCap_PublishableKeyUnitsPerClientIncludeOrderedHeldSeats(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	h.mustOrder(pk, "ten", gaBody("evt_concert_ga", 10), fromShop())
	wantError(t, h.post("/v1/orders", pk, gaBody("evt_concert_ga", 1), idem("eleven"), fromShop()), http.StatusTooManyRequests, "rate_limited", "")

	rows := [][]string{{"seat_A1", "seat_A2", "seat_A3", "seat_A4", "seat_A5"}, {"seat_B1", "seat_B2", "seat_B3", "seat_B4", "seat_B5"}, {"seat_C1", "seat_C2", "seat_C3", "seat_C4", "seat_C5"}}
	for i, row := range rows[:2] {
		hold := h.mustHold(pk, holdBody("evt_theatre", row...), fromShop())
		r := h.post("/v1/orders", pk, jsonBody("buyer", anna, "seat_reservation_ids", reservationIDs(hold)), idem(fmt.Sprintf("seats-%d", i)), fromShop())
		wantStatus(t, r, http.StatusCreated)
	}
	// Ten seats in unpaid orders: the next hold is refused already (held seats count too).
	wantError(t, h.post("/v1/seat-holds", pk, holdBody("evt_theatre", rows[2]...), fromShop()), http.StatusTooManyRequests, "rate_limited", "")
}

// Promo codes cannot be told apart by the answer (unknown, not started, for other
// tiers, used up: one code, one message, one param), and a publishable key's
// previews are budgeted per client IP, orders with a promo code included.
func TestPromo_OneAnswerForEveryRejectedCodeAndPreviewsBudgetedPerClient(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	h.mustOrder(sk, "use-once", gaBody("evt_concert_ga", 1, "promo_code", "ONCE"))

	var messages []string
	for _, code := range []string{"NOPE", "LATER", "VIPHALF", "ONCE", "ten-wrong"} {
		for _, r := range []response{
			h.post("/v1/orders/preview", sk, jsonBody("tier_id", "evt_concert_ga", "promo_code", code)),
			h.post("/v1/orders", sk, gaBody("evt_concert_ga", 1, "promo_code", code), idem("try-"+code)),
		} {
			wantError(t, r, http.StatusBadRequest, "invalid_request", "promo_code")
			messages = append(messages, r.json(t)["error"].(map[string]any)["message"].(string))
		}
	}
	for _, m := range messages {
		if m != messages[0] {
			t.Fatalf("rejected promo codes are told apart: %q vs %q", messages[0], m)
		}
	}

	h.srv.Sales.Deps.Settings.PreviewIPRate = 5
	for i := range 5 {
		code := fmt.Sprintf("GUESS%d", i)
		wantError(t, h.post("/v1/orders/preview", pk, jsonBody("tier_id", "evt_concert_ga", "promo_code", code), fromShop()),
			http.StatusBadRequest, "invalid_request", "promo_code")
	}
	r := h.post("/v1/orders/preview", pk, jsonBody("tier_id", "evt_concert_ga", "promo_code", "TEN"), fromShop())
	wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
	if ra := r.Header.Get("Retry-After"); ra == "" {
		t.Error("429 without Retry-After")
	}
	// An order with a promo code draws from the same budget; one without does not.
	wantError(t, h.post("/v1/orders", pk, gaBody("evt_concert_ga", 1, "promo_code", "TEN"), idem("pk-promo"), fromShop()),
		http.StatusTooManyRequests, "rate_limited", "")
	h.mustOrder(pk, "pk-plain", gaBody("evt_concert_ga", 1), fromShop())
	// Another client has its own budget, and the secret key none.
	wantStatus(t, h.post("/v1/orders/preview", pk, jsonBody("tier_id", "evt_concert_ga", "promo_code", "TEN"), fromShop(), remoteAddr("198.51.100.7:5000")), http.StatusOK)
	for range 10 {
		wantStatus(t, h.post("/v1/orders/preview", sk, jsonBody("tier_id", "evt_concert_ga", "promo_code", "TEN")), http.StatusOK)
	}
	// The next window admits the client again.
	h.clk.Advance(time.Minute)
	wantStatus(t, h.post("/v1/orders/preview", pk, jsonBody("tier_id", "evt_concert_ga", "promo_code", "TEN"), fromShop()), http.StatusOK)
}

// The poll token also travels in a header (preferred: query strings are logged):
// Tix-Poll-Token, or Authorization: Bearer pt_... (told from keys by its prefix).
func TestPollToken_AcceptedInHeaders(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	o := h.mustOrder(sk, "poll-1", gaBody("evt_concert_ga", 1))
	id, tok := o["id"].(string), o["poll_token"].(string)
	for name, opt := range map[string]reqOpt{
		"Tix-Poll-Token":       header("Tix-Poll-Token", tok),
		"Authorization Bearer": bearer(tok),
	} {
		t.Run(name, func(t *testing.T) {
			r := h.do("GET", "/v1/orders/"+id, "", opt)
			wantStatus(t, r, http.StatusOK)
			if got := r.json(t); got["id"] != id || got["buyer"] != nil {
				t.Fatalf("poll by header: %s", r.body)
			}
			wantStatus(t, h.do("POST", "/v1/orders/"+id+"/check-status", "", opt), http.StatusOK)
		})
	}
	wantError(t, h.do("GET", "/v1/orders/"+id, "", header("Tix-Poll-Token", "pt_wrong")), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, h.do("GET", "/v1/orders/"+id, "", bearer("pt_wrong")), http.StatusUnauthorized, "unauthorized", "")
	// A poll token is no key elsewhere.
	wantError(t, h.do("GET", "/v1/events", "", bearer(tok)), http.StatusUnauthorized, "unauthorized", "")
	// Browsers may send the header cross-origin.
	r := h.do("OPTIONS", "/v1/orders/"+id, "", header("Origin", shopOrigin), header("Access-Control-Request-Method", "GET"))
	wantStatus(t, r, http.StatusNoContent)
	if !strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Tix-Poll-Token") {
		t.Errorf("preflight allows %q", r.Header.Get("Access-Control-Allow-Headers"))
	}
}

// A publishable key's seat reservations are bound to the key and the client
// network that held them: another address with the same key (or another pk
// key from the same address) can neither release them (released: 0) nor
// order them (404, as for a reservation that does not exist); the holder can.
func TestSeatHold_PublishableReservationsBoundToTheirClient(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk, pk2 := h.pkKey(orgA), h.pkKey(orgA)
	hold := h.mustHold(pk, holdBody("evt_theatre", "seat_A1", "seat_A2"), fromShop())
	rids := reservationIDs(hold)
	other := remoteAddr("198.51.100.7:5000")

	for _, try := range []struct {
		key string
		opt reqOpt
	}{{pk, other}, {pk2, remoteAddr("192.0.2.10:40000")}} {
		r := h.del("/v1/seat-holds", try.key, releaseBody(rids...), fromShop(), try.opt)
		wantStatus(t, r, http.StatusOK)
		if n := num(t, r.json(t), "released"); n != 0 {
			t.Fatalf("another client released %d of the holder's reservations", n)
		}
		wantError(t, h.post("/v1/orders", try.key, jsonBody("buyer", anna, "seat_reservation_ids", rids), idem("steal"), fromShop(), try.opt),
			http.StatusNotFound, "not_found", "seat_reservation_ids[0]")
	}
	if st := h.seatStatuses(sk); st["seat_A1"] != "unavailable" || st["seat_A2"] != "unavailable" {
		t.Fatalf("seats after foreign attempts: %v", st)
	}
	// The holder (same /32) orders one and releases the other.
	h.mustOrder(pk, "mine", jsonBody("buyer", anna, "seat_reservation_ids", rids[:1]), fromShop())
	r := h.del("/v1/seat-holds", pk, releaseBody(rids[1]), fromShop())
	wantStatus(t, r, http.StatusOK)
	if n := num(t, r.json(t), "released"); n != 1 {
		t.Fatalf("the holder released %d, want 1", n)
	}
}
