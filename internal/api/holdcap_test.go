package api_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
)

// standBody orders qty standing places of the theatre (the event whose seats
// are held below).
func standBody(qty int) string {
	return jsonBody("buyer", anna, "standing_items", []any{map[string]any{"tier_id": "tier_stand", "qty": qty}})
}

// One budget per client and event: seats held plus units in pending orders
// stay within TIX_ORDER_IP_MAX_UNITS (10), however many holds and orders one
// address sends at once. Three holds of five seats and six orders of two (27
// units asked for) race on DynamoDB Local; what was granted adds up to 10 at
// most.
func TestClientUnits_HoldsAndOrdersShareOneBudgetUnderConcurrency(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	rows := [][]string{{"seat_A1", "seat_A2", "seat_A3", "seat_A4", "seat_A5"}, {"seat_B1", "seat_B2", "seat_B3", "seat_B4", "seat_B5"}, {"seat_C1", "seat_C2", "seat_C3", "seat_C4", "seat_C5"}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	granted, problems := 0, []string{}
	tally := func(r response, units int) {
		mu.Lock()
		defer mu.Unlock()
		switch r.StatusCode {
		case http.StatusOK, http.StatusCreated:
			granted += units
		case http.StatusTooManyRequests:
		default:
			problems = append(problems, fmt.Sprintf("%d %s", r.StatusCode, r.body))
		}
	}
	for i, row := range rows {
		wg.Go(func() { tally(h.post("/v1/seat-holds", pk, holdBody("evt_theatre", row...), fromShop()), 5) })
		for j := range 2 {
			wg.Go(func() {
				tally(h.post("/v1/orders", pk, standBody(2), idem(fmt.Sprintf("stand-%d-%d", i, j)), fromShop()), 2)
			})
		}
	}
	wg.Wait()
	if len(problems) > 0 {
		t.Fatalf("unexpected answers: %v", problems)
	}
	if granted > 10 || granted < 6 {
		t.Fatalf("one client was granted %d units in holds and orders together, want at most 10 (and at least 6: the budget is not wasted)", granted)
	}
	// Another address has its own budget.
	h.mustOrder(pk, "elsewhere", standBody(10), fromShop(), remoteAddr("198.51.100.7:5000"))
}

// A hold's seats count once: ordering them moves them from the hold to the
// order; releasing seats and a hold's expiry give them back.
func TestClientUnits_HeldSeatsCountOnceAndComeBack(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	pk := h.pkKey(orgA)
	sk, _ := h.key(orgA, auth.Secret)
	hold := h.mustHold(pk, holdBody("evt_theatre", "seat_A1", "seat_A2", "seat_A3", "seat_A4", "seat_A5"), fromShop())
	seated := h.mustOrder(pk, "five-seats", jsonBody("buyer", anna, "seat_reservation_ids", reservationIDs(hold)), fromShop()) // still 5
	second := h.mustHold(pk, holdBody("evt_theatre", "seat_B1", "seat_B2", "seat_B3"), fromShop())                             // 8
	standing := h.mustOrder(pk, "two-standing", standBody(2), fromShop())                                                      // 10
	wantError(t, h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_C1"), fromShop()), http.StatusTooManyRequests, "rate_limited", "")
	wantError(t, h.post("/v1/orders", pk, standBody(1), idem("eleventh"), fromShop()), http.StatusTooManyRequests, "rate_limited", "")
	// The budget is per event, and a secret key is not counted.
	h.mustOrder(pk, "other-event", gaBody("evt_concert_ga", 2), fromShop())
	h.mustHold(sk, holdBody("evt_theatre", "seat_C5"))

	// Releasing two held seats gives two back.
	r := h.del("/v1/seat-holds", pk, releaseBody(reservationIDs(second)[:2]...), fromShop())
	wantStatus(t, r, http.StatusOK)
	h.mustHold(pk, holdBody("evt_theatre", "seat_C1", "seat_C2"), fromShop()) // 10
	wantError(t, h.post("/v1/orders", pk, standBody(1), idem("still-full"), fromShop()), http.StatusTooManyRequests, "rate_limited", "")

	// Paying the orders gives their units back; the held seats (B3, C1, C2)
	// stay counted until their hold expires.
	h.mustPay(sk, seated["id"].(string))
	h.mustPay(sk, standing["id"].(string))
	h.mustOrder(pk, "seven", standBody(7), fromShop()) // 3 held + 7
	wantError(t, h.post("/v1/orders", pk, standBody(1), idem("eighth"), fromShop()), http.StatusTooManyRequests, "rate_limited", "")
	h.clk.Advance(15*time.Minute + time.Second) // the holds and the order expired, no timer ran
	h.mustHold(pk, holdBody("evt_theatre", "seat_B1", "seat_B2", "seat_B3", "seat_B4", "seat_B5", "seat_C1", "seat_C2", "seat_C3", "seat_C4", "seat_C5"), fromShop())
}
