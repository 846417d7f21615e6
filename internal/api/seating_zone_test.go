package api_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"tix/internal/auth"
)

// zoneSeats maps each zone of a seating response to its seats (nil: null).
func zoneSeats(t *testing.T, m map[string]any) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	for _, z := range m["zones"].([]any) {
		zm := z.(map[string]any)
		seats, _ := zm["seats"].([]any)
		out[zm["id"].(string)] = seats
	}
	return out
}

// zone_id fills the seats of that zone only: the response is the whole map
// (every zone with its counts, tiers and shape, the legend, the layout) with
// the other zones' seats null; without it nothing changes.
func TestSeating_ZoneIDReadsOneZonesSeats(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	full := h.get("/v1/events/evt_theatre/seating", sk)
	wantStatus(t, full, 200)
	if got := zoneSeats(t, full.json(t)); len(got["zone_stalls"]) != 15 || got["zone_pit"] != nil {
		t.Fatalf("whole map: %d stalls seats, pit %v", len(got["zone_stalls"]), got["zone_pit"])
	}
	stalls := h.get("/v1/events/evt_theatre/seating?zone_id=zone_stalls", sk)
	wantStatus(t, stalls, 200)
	if string(stalls.body) != string(full.body) { // the pit is standing: its seats are null anyway
		t.Errorf("zone_id=zone_stalls differs from the whole map:\n%s\n%s", stalls.body, full.body)
	}
	pit := h.get("/v1/events/evt_theatre/seating?zone_id=zone_pit", sk)
	wantStatus(t, pit, 200)
	m := pit.json(t)
	if got := zoneSeats(t, m); got["zone_stalls"] != nil || len(got) != 2 {
		t.Fatalf("zone_id=zone_pit: stalls seats %v, zones %d; want null and both zones", got["zone_stalls"], len(got))
	}
	// Everything but the other zone's seats is the whole map's.
	want := full.json(t)
	want["zones"].([]any)[0].(map[string]any)["seats"] = nil
	if !reflect.DeepEqual(m, want) {
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(want)
		t.Errorf("zone_id=zone_pit:\n%s\nwant\n%s", a, b)
	}
}

// A zone_id that is not a zone of the map is 404 not_found naming zone_id,
// as an unknown occurrence_id is (the id names a part of the event, which
// does not exist for this key); an empty one is a malformed parameter.
func TestSeating_UnknownOrEmptyZoneID(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	wantError(t, h.get("/v1/events/evt_theatre/seating?zone_id=zone_nope", sk), 404, "not_found", "zone_id")
	wantError(t, h.get("/v1/events/evt_concert/seating?zone_id=zone_stalls", sk), 404, "not_found", "zone_id") // no map
	wantError(t, h.get("/v1/events/evt_theatre/seating?zone_id=", sk), 400, "invalid_request", "zone_id")
	wantError(t, h.get("/v1/events/evt_other/seating?zone_id=zone_stalls", sk), 404, "not_found", "")
}
