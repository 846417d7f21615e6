package api_test

import (
	"net/http"
	"testing"

	"tix/internal/auth"
)

func bestBody(tier string, qty any) string {
	return jsonBody("event_id", "evt_theatre", "best_available", map[string]any{"tier_id": tier, "quantity": qty})
}

// POST /v1/seat-holds with best_available holds the best free seats of the
// tier, next to each other in one row, shown held on the seating map; the
// request's mistakes are 400 with their param, too few seats 409.
func TestSeatHold_BestAvailable(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)

	rows := map[string]bool{}
	for range 2 {
		hold := h.mustHold(sk, bestBody("tier_stalls", 3))
		ids, tiers := holdSeats(hold, "seat_id"), holdSeats(hold, "ticket_tier_id")
		if len(ids) != 3 || num(t, hold, "total_base_price") != 3*300000 {
			t.Fatalf("hold %v, want 3 stalls seats", hold)
		}
		row := ids[0][:6] // seat_B
		for i, id := range ids {
			if id[:6] != row || tiers[i] != "tier_stalls" || (i > 0 && id[6] != ids[i-1][6]+1) {
				t.Fatalf("hold %v: seats not next to each other in one row of the tier", ids)
			}
		}
		if rows[row] {
			t.Fatalf("two holds in row %s of 5 seats", row)
		}
		rows[row] = true
		statuses := h.seatStatuses(sk)
		for _, id := range ids {
			if statuses[id] != "unavailable" {
				t.Fatalf("seat %s is %q on the map, want unavailable", id, statuses[id])
			}
		}
	}
	if !rows["seat_B"] || !rows["seat_C"] {
		t.Fatalf("holds in rows %v, want B and C", rows)
	}

	both := jsonBody("event_id", "evt_theatre", "seat_ids", []string{"seat_A1"}, "best_available", map[string]any{"tier_id": "tier_stalls", "quantity": 1})
	wantError(t, h.post("/v1/seat-holds", sk, both), http.StatusBadRequest, "invalid_request", "best_available")
	wantError(t, h.post("/v1/seat-holds", sk, bestBody("tier_stalls", 11)), http.StatusBadRequest, "invalid_request", "best_available.quantity")
	wantError(t, h.post("/v1/seat-holds", sk, bestBody("tier_stand", 1)), http.StatusNotFound, "not_found", "best_available.tier_id")
	wantError(t, h.post("/v1/seat-holds", sk, jsonBody("event_id", "evt_theatre")), http.StatusBadRequest, "invalid_request", "seat_ids")
	wantError(t, h.post("/v1/seat-holds", sk, bestBody("tier_stalls", 5)), http.StatusConflict, "seat_conflict", "best_available.quantity")
}
