package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketcode"
)

// verifyPageBoth runs the Go and the JavaScript verifiers on a page's body
// with the JWK set at now; it fails when they disagree and returns the answer.
func verifyPageBoth(t *testing.T, jwks ticketcode.JWKS, now time.Time, body string) bool {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(jwks)
	keys := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(keys, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("..", "..", "scripts", "door", "verify.js"), "--admission-list", keys, now.Format(time.RFC3339))
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verifier: %v", err)
	}
	var js struct {
		Valid bool `json:"valid"`
	}
	if err := json.Unmarshal(out, &js); err != nil {
		t.Fatalf("node verifier answered %s", out)
	}
	var p ticketcode.AdmissionPage
	goValid := json.Unmarshal([]byte(body), &p) == nil && ticketcode.VerifyAdmissionPage(&p, ticketcode.FromJWKS(jwks), now) == nil
	if goValid != js.Valid {
		t.Fatalf("verifiers disagree on a page: Go %v, JavaScript %v\n%s", goValid, js.Valid, body)
	}
	return js.Valid
}

// The admission list through the real router: a door key reads its event's
// signed pages (verified by the Go and the JavaScript verifiers, a tampered
// page refused by both), and only its event's.
func TestAdmissionList_ThroughTheAPIVerifiedInGoAndJavaScript(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	doorKey, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeCheckinsWrite), withEvents("evt_theatre"))
	tk := h.paidSeatedOrder(sk, "api-list", "seat_A1", "seat_B2")
	codes := codesOf(t, tk)
	wantScan(t, h.scan(doorKey, codes[1], "north"), "admitted")

	r := h.get("/v1/events/evt_theatre/admission-list?limit=1", doorKey)
	wantStatus(t, r, http.StatusOK)
	page := r.json(t)
	if page["has_more"] != true || len(page["data"].([]any)) != 1 || page["next_cursor"] == nil || page["generated_at"] == nil {
		t.Fatalf("first page: %s", r.body)
	}
	jwks := h.jwks(orgA)
	if !verifyPageBoth(t, jwks, h.clk.Now(), string(r.body)) {
		t.Fatalf("a page the service signed does not verify: %s", r.body)
	}
	r2 := h.get("/v1/events/evt_theatre/admission-list?limit=1&cursor="+page["next_cursor"].(string), doorKey)
	wantStatus(t, r2, http.StatusOK)
	if !verifyPageBoth(t, jwks, h.clk.Now(), string(r2.body)) || r2.json(t)["has_more"] != false {
		t.Fatalf("second page: %s", r2.body)
	}
	states := map[string]string{}
	for _, body := range []response{r, r2} {
		for _, e := range body.json(t)["data"].([]any) {
			states[e.(map[string]any)["ticket_number"].(string)] = e.(map[string]any)["state"].(string)
		}
	}
	tickets := tk["tickets"].([]any)
	if states[tickets[0].(map[string]any)["ticket_number"].(string)] != "admitted" || states[tickets[1].(map[string]any)["ticket_number"].(string)] != "valid" {
		t.Errorf("states %v", states)
	}
	for _, tamper := range [][2]string{{`"state":"admitted"`, `"state":"valid"`}, {`"state":"valid"`, `"state":"admitted"`}, {`"has_more":true`, `"has_more":false`}} {
		body := string(r.body) + string(r2.body)
		i := strings.Index(body, tamper[0])
		if i < 0 {
			continue
		}
		one := string(r.body)
		if i >= len(r.body) {
			one = string(r2.body)
		}
		if verifyPageBoth(t, jwks, h.clk.Now(), strings.Replace(one, tamper[0], tamper[1], 1)) {
			t.Errorf("a page with %s changed to %s verifies", tamper[0], tamper[1])
		}
	}
	wantError(t, h.get("/v1/events/evt_concert/admission-list", doorKey), http.StatusNotFound, "not_found", "")
	skB, _ := h.key(orgB, auth.Secret)
	wantError(t, h.get("/v1/events/evt_theatre/admission-list", skB), http.StatusNotFound, "not_found", "")
	wantError(t, h.get("/v1/events/evt_theatre/admission-list?limit=1001", doorKey), http.StatusBadRequest, "invalid_request", "limit")
	wantError(t, h.get("/v1/events/evt_theatre/admission-list?cursor=abc", doorKey), http.StatusBadRequest, "invalid_request", "cursor")
	wantError(t, h.get("/v1/events/evt_theatre/admission-list", h.pkKey(orgA), fromShop()), http.StatusForbidden, "forbidden", "")
}

func batchBody(gate string, scans ...map[string]any) string {
	return jsonBody("gate", gate, "scans", scans)
}

func offlineScan(id, code string, at time.Time) map[string]any {
	return map[string]any{"client_scan_id": id, "code": code, "scanned_at": at.Format(time.RFC3339Nano)}
}

// Offline scans uploaded through the real router: the earliest scan of a
// ticket wins over a later online one (reported superseded), duplicates are
// answered with the first, a re-upload changes nothing, and malformed
// uploads are invalid_request with the scan's param.
func TestCheckInBatch_ThroughTheAPI(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	doorKey, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeCheckinsWrite), withEvents("evt_theatre"))
	tk := h.paidSeatedOrder(sk, "api-batch", "seat_A1", "seat_B2")
	codes := codesOf(t, tk)
	online := h.scan(doorKey, codes[1], "south")
	wantScan(t, online, "admitted")
	now := h.clk.Now()
	second := tk["tickets"].([]any)[1].(map[string]any)["ticket_number"].(string)
	body := batchBody("north-1",
		offlineScan("dev:1", codes[1], now.Add(-10*time.Minute)),
		offlineScan("dev:2", codes[1], now.Add(-9*time.Minute)),
		offlineScan("dev:3", strings.ToLower(second), now.Add(-8*time.Minute)))
	r := h.post("/v1/check-ins/batch", doorKey, body)
	wantStatus(t, r, http.StatusOK)
	answers := r.json(t)["data"].([]any)
	a0, a1, a2 := answers[0].(map[string]any), answers[1].(map[string]any), answers[2].(map[string]any)
	sup, _ := a0["superseded"].(map[string]any)
	if a0["client_scan_id"] != "dev:1" || a0["result"] != "admitted" || sup == nil || sup["id"] != online["check_in"].(map[string]any)["id"] {
		t.Fatalf("earliest scan: %v", a0)
	}
	if a1["result"] != "duplicate" || a1["check_in"].(map[string]any)["id"] != a0["check_in"].(map[string]any)["id"] || a1["superseded"] != nil {
		t.Fatalf("duplicate: %v", a1)
	}
	if a2["result"] != "admitted" || a2["ticket_number"] != second || a2["seat"].(map[string]any)["seat_code"] != "seat_B2" {
		t.Fatalf("typed number: %v", a2)
	}
	again := h.scan(doorKey, codes[1], "east")
	if again["check_in"].(map[string]any)["gate"] != "north-1" {
		t.Errorf("online rescan shows %v, want the offline admission", again["check_in"])
	}
	re := h.post("/v1/check-ins/batch", doorKey, body)
	wantStatus(t, re, http.StatusOK)
	if got := re.json(t)["data"].([]any); got[0].(map[string]any)["result"] != "admitted" || got[0].(map[string]any)["superseded"] != nil ||
		got[1].(map[string]any)["result"] != "duplicate" || got[2].(map[string]any)["result"] != "admitted" {
		t.Errorf("re-upload: %s", re.body)
	}

	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = offlineScan(fmt.Sprint("m", i), codes[2], now)
	}
	for _, c := range []struct{ body, param string }{
		{batchBody("north", offlineScan("x", codes[2], now.Add(time.Hour))), "scans[0].scanned_at"},
		{jsonBody("gate", "north", "scans", []any{map[string]any{"client_scan_id": "x", "code": codes[2], "scanned_at": "yesterday"}}), "scans[0].scanned_at"},
		{batchBody("north", many...), "scans"},
		{batchBody("", offlineScan("x", codes[2], now)), "gate"},
		{batchBody("north", offlineScan("", codes[2], now)), "scans[0].client_scan_id"},
	} {
		wantError(t, h.post("/v1/check-ins/batch", doorKey, c.body), http.StatusBadRequest, "invalid_request", c.param)
	}
	otherDoor, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeCheckinsWrite), withEvents("evt_concert"))
	r = h.post("/v1/check-ins/batch", otherDoor, batchBody("north", offlineScan("o:1", codes[2], now)))
	wantStatus(t, r, http.StatusOK)
	if got := r.json(t)["data"].([]any)[0].(map[string]any)["result"]; got != "wrong_event" {
		t.Errorf("another event's door: %s", got)
	}
	noScope, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersRead))
	wantError(t, h.post("/v1/check-ins/batch", noScope, body), http.StatusForbidden, "insufficient_scope", "scope")
}
