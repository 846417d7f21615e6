package api_test

import (
	"testing"

	"tix/internal/auth"
)

// POST /orders/preview refuses what POST /orders refuses while pricing, with
// the same statuses; the harness checks each against the document (the 422
// for items of several events was once undocumented).
func TestPreview_RefusesLikeCreate(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	rid := reservationIDs(h.mustHold(sk, holdBody("evt_theatre", "seat_B1")))[0]
	for _, c := range []struct {
		name   string
		body   string
		status int
		code   string
		param  string
	}{
		{"items of several events", jsonBody("standing_items", []any{map[string]any{"tier_id": "tier_stand", "qty": 1}, map[string]any{"tier_id": "evt_concert_ga", "qty": 1}}), 422, "unsupported", "standing_items[1].tier_id"},
		{"reservations of another event than event_id", jsonBody("seat_reservation_ids", []string{rid}, "event_id", "evt_concert"), 422, "unsupported", "seat_reservation_ids"},
		{"unknown tier", jsonBody("tier_id", "tier_nope"), 404, "not_found", "tier_id"},
		{"buyer", jsonBody("tier_id", "evt_concert_ga", "buyer", anna), 400, "invalid_request", "buyer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.post("/v1/orders/preview", sk, c.body)
			wantError(t, r, c.status, c.code, c.param)
		})
	}
}
