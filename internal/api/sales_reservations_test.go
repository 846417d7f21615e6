package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
)

func seatOrder(rids ...string) string {
	return jsonBody("buyer", anna, "seat_reservation_ids", rids)
}

// The order must be created before the hold's expires_at: a lapsed reservation
// is refused even though nobody took its seat since.
func TestOrder_ExpiredReservationIsRefusedEvenWhenTheSeatIsFree(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)

	hold := h.mustHold(sk, holdBody("evt_theatre", "seat_A1", "seat_A2"))
	rids := reservationIDs(hold)
	exp, err := time.Parse(time.RFC3339, hold["expires_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Set(exp) // expires_at itself is too late
	r := h.post("/v1/orders", sk, seatOrder(rids...), idem("lapsed-1"))
	wantError(t, r, http.StatusConflict, "seat_conflict", "seat_reservation_ids")
	if !strings.Contains(string(r.body), "expired") {
		t.Errorf("message does not say the hold expired: %s", r.body)
	}
	h.clk.Advance(time.Hour)
	if st := h.seatStatuses(sk); st["seat_A1"] != "available" || st["seat_A2"] != "available" {
		t.Fatalf("the seats should be free (nobody took them): %v", st)
	}
	wantError(t, h.post("/v1/orders", sk, seatOrder(rids[1]), idem("lapsed-2")), http.StatusConflict, "seat_conflict", "seat_reservation_ids")
	// The refusal bound nothing: the seats can be held and ordered afresh.
	again := h.mustHold(sk, holdBody("evt_theatre", "seat_A1"))
	h.mustOrder(sk, "lapsed-3", seatOrder(reservationIDs(again)...))
}

// A reservation ends with its hold: once released, or used by an order (even
// one cancelled since), it cannot be ordered again.
func TestOrder_ReleasedOrUsedReservationCannotBeOrderedAgain(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)

	// Released: DELETE answered released 1, then the order is refused.
	hold := h.mustHold(sk, holdBody("evt_theatre", "seat_B1"))
	rid := reservationIDs(hold)[0]
	r := h.del("/v1/seat-holds", sk, releaseBody(rid))
	wantStatus(t, r, http.StatusOK)
	if n := num(t, r.json(t), "released"); n != 1 {
		t.Fatalf("released %d, want 1", n)
	}
	wantError(t, h.post("/v1/orders", sk, seatOrder(rid), idem("rel-1")), http.StatusConflict, "seat_conflict", "seat_reservation_ids")
	if st := h.seatStatuses(sk); st["seat_B1"] != "available" {
		t.Errorf("released seat B1 is %s, want available", st["seat_B1"])
	}

	// Used by an order that was cancelled: the reservation is spent.
	hold = h.mustHold(sk, holdBody("evt_theatre", "seat_B2", "seat_B3"))
	rids := reservationIDs(hold)
	o := h.mustOrder(sk, "used-1", seatOrder(rids[0]))
	wantStatus(t, h.simulate(sk, o["id"].(string), "cancelled"), http.StatusOK)
	wantError(t, h.post("/v1/orders", sk, seatOrder(rids[0]), idem("used-2")), http.StatusConflict, "seat_conflict", "seat_reservation_ids")
	// The hold's other reservation is still live and can be ordered; the
	// spent one in the same request is named by its index in the message.
	r = h.post("/v1/orders", sk, seatOrder(rids[1], rids[0]), idem("used-3"))
	wantError(t, r, http.StatusConflict, "seat_conflict", "seat_reservation_ids")
	if !strings.Contains(string(r.body), "seat_reservation_ids[1]") {
		t.Errorf("the conflict does not name the spent reservation's index: %s", r.body)
	}
	h.mustOrder(sk, "used-4", seatOrder(rids[1]))
	// Used by a pending order: neither a second order nor a release takes it.
	wantError(t, h.post("/v1/orders", sk, seatOrder(rids[1]), idem("used-5")), http.StatusConflict, "seat_conflict", "seat_reservation_ids")
	r = h.del("/v1/seat-holds", sk, releaseBody(rids[1]))
	if n := num(t, r.json(t), "released"); n != 0 {
		t.Errorf("released %d reservations of a pending order, want 0", n)
	}
}
