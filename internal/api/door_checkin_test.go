package api_test

import (
	"net/http"
	"strings"
	"testing"

	"tix/internal/auth"
)

func withEvents(ids ...string) keyOpt { return func(k *auth.Key) { k.Events = ids } }

// scanBody is POST /v1/check-ins's body for code at gate.
func scanBody(code, gate string) string { return jsonBody("code", code, "gate", gate) }

func (h *harness) scan(secret, code, gate string, opts ...reqOpt) map[string]any {
	h.t.Helper()
	r := h.post("/v1/check-ins", secret, scanBody(code, gate), opts...)
	wantStatus(h.t, r, http.StatusOK)
	return r.json(h.t)
}

func wantScan(t *testing.T, got map[string]any, result string) {
	t.Helper()
	if got["result"] != result {
		t.Fatalf("result %v, want %s: %v", got["result"], result, got)
	}
}

// The check-in API through the real router: a door key admits a signed
// ticket once (seat shown), a later scan sees the first, tampered codes are
// invalid, a bound key refuses another event's ticket, a retry with its
// Idempotency-Key repeats the admission, only a supervisor undoes a scan,
// and the admitted ticket is used and its order refused a refund.
func TestCheckIns_TheDoorThroughTheAPI(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	doorKey, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeCheckinsWrite), withEvents("evt_theatre"))
	otherDoor, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeCheckinsWrite), withEvents("evt_concert"))
	pk := h.pkKey(orgA)
	tk := h.paidSeatedOrder(sk, "api-door", "seat_A1", "seat_B2")
	codes := codesOf(t, tk)
	tickets := tk["tickets"].([]any)
	first := tickets[0].(map[string]any)

	wantError(t, h.post("/v1/check-ins", pk, scanBody(codes[1], "north"), fromShop()), http.StatusForbidden, "forbidden", "")
	noScope, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersRead))
	wantError(t, h.post("/v1/check-ins", noScope, scanBody(codes[1], "north")), http.StatusForbidden, "insufficient_scope", "scope")
	wantError(t, h.post("/v1/check-ins", doorKey, jsonBody("code", codes[1])), http.StatusBadRequest, "invalid_request", "gate")
	wantError(t, h.post("/v1/check-ins", doorKey, jsonBody("gate", "north")), http.StatusBadRequest, "invalid_request", "code")
	wantError(t, h.post("/v1/check-ins", doorKey, scanBody(codes[1], "north"), idem("a,b")), http.StatusBadRequest, "invalid_request", "Idempotency-Key")

	wantScan(t, h.scan(doorKey, strings.Replace(codes[1], `"seat_id":"seat_A1"`, `"seat_id":"seat_B2"`, 1), "north"), "invalid")
	wantScan(t, h.scan(doorKey, strings.Replace(codes[1], first["ticket_number"].(string), tickets[1].(map[string]any)["ticket_number"].(string), 1), "north"), "invalid")
	wantScan(t, h.scan(otherDoor, codes[1], "north"), "wrong_event")

	admitted := h.scan(doorKey, codes[1], "north", idem("door-scan-1"))
	wantScan(t, admitted, "admitted")
	seat, _ := admitted["seat"].(map[string]any)
	ci, _ := admitted["check_in"].(map[string]any)
	if admitted["ticket_number"] != first["ticket_number"] || seat == nil || seat["seat_code"] != "seat_A1" || ci == nil || ci["gate"] != "north" {
		t.Fatalf("admitted %v", admitted)
	}
	replay := h.scan(doorKey, codes[1], "north", idem("door-scan-1"))
	wantScan(t, replay, "admitted")
	if replay["check_in"].(map[string]any)["id"] != ci["id"] {
		t.Errorf("replay %v, want check-in %v", replay, ci["id"])
	}
	again := h.scan(doorKey, first["ticket_number"].(string), "south")
	wantScan(t, again, "already_admitted")
	if again["check_in"].(map[string]any)["gate"] != "north" {
		t.Errorf("already admitted shows %v, want the north gate's scan", again["check_in"])
	}

	r := h.get("/v1/orders/"+tk["order_id"].(string)+"/tickets", sk)
	wantStatus(t, r, http.StatusOK)
	if got := r.json(t)["tickets"].([]any); got[0].(map[string]any)["status"] != "used" || got[1].(map[string]any)["status"] != "issued" {
		t.Errorf("tickets after a check-in: %s", r.body)
	}
	wantError(t, h.post("/v1/orders/"+tk["order_id"].(string)+"/refund", sk, ""), http.StatusConflict, "conflict", "")

	undo := "/v1/check-ins/" + ci["id"].(string)
	wantError(t, h.do("DELETE", undo, "", bearer(doorKey)), http.StatusForbidden, "insufficient_scope", "scope")
	skB, _ := h.key(orgB, auth.Secret)
	wantError(t, h.do("DELETE", undo, "", bearer(skB)), http.StatusNotFound, "not_found", "")
	r = h.do("DELETE", undo, "", bearer(sk))
	wantStatus(t, r, http.StatusOK)
	wantError(t, h.do("DELETE", undo, "", bearer(sk)), http.StatusNotFound, "not_found", "")
	wantScan(t, h.scan(doorKey, codes[1], "west"), "admitted")

	// The order's code admits the rest; another organizer's key finds nothing.
	order := h.scan(doorKey, codes[0], "west")
	wantScan(t, order, "admitted")
	if n := len(order["tickets"].([]any)); n != 2 {
		t.Errorf("order code answered %d tickets", n)
	}
	wantScan(t, h.scan(skB, codes[2], "west"), "invalid")

	r = h.get("/v1/events/evt_theatre/check-in-stats", doorKey)
	wantStatus(t, r, http.StatusOK)
	st := r.json(t)
	if num(t, st, "sold") != 2 || num(t, st, "admitted") != 2 || len(st["gates"].([]any)) != 1 {
		t.Errorf("stats %s", r.body)
	}
	wantError(t, h.get("/v1/events/evt_concert/check-in-stats", doorKey), http.StatusNotFound, "not_found", "")
	wantError(t, h.get("/v1/events/evt_theatre/check-in-stats", skB), http.StatusNotFound, "not_found", "")
}

// GET /v1/ticket-keys answers the organizer's JWK set to any of its keys.
func TestTicketKeys_AJWKSetForAnyKeyOfTheOrganizer(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	pk := h.pkKey(orgA)
	r := h.get("/v1/ticket-keys", sk)
	wantStatus(t, r, http.StatusOK)
	keys := r.json(t)["keys"].([]any)
	k := keys[0].(map[string]any)
	if len(keys) != 1 || k["kty"] != "OKP" || k["crv"] != "Ed25519" || k["kid"] == "" || len(k["x"].(string)) != 43 {
		t.Fatalf("ticket keys %s", r.body)
	}
	byPK := h.get("/v1/ticket-keys", pk, fromShop())
	wantStatus(t, byPK, http.StatusOK)
	if string(byPK.body) != string(r.body) {
		t.Errorf("pk key's set %s differs from sk's %s", byPK.body, r.body)
	}
	if jwks := h.jwks(orgA); len(jwks.Keys) != 1 || jwks.Keys[0].Kid != k["kid"] {
		t.Errorf("the served set is not the organizer's: %+v", jwks)
	}
	skB, _ := h.key(orgB, auth.Secret)
	other := h.get("/v1/ticket-keys", skB)
	wantStatus(t, other, http.StatusOK)
	if strings.Contains(string(other.body), k["kid"].(string)) {
		t.Errorf("another organizer sees org A's key: %s", other.body)
	}
}
