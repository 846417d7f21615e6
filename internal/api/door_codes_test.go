package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketcode"
	"tix/internal/ticketing"
)

// paidSeatedOrder orders seats A1 and B2 of evt_theatre with sk, pays it and
// returns GET /orders/{id}/tickets.
func (h *harness) paidSeatedOrder(sk, idemKey string, seats ...string) map[string]any {
	h.t.Helper()
	hold := h.mustHold(sk, holdBody("evt_theatre", seats...))
	o := h.mustOrder(sk, idemKey, jsonBody("buyer", anna, "seat_reservation_ids", reservationIDs(hold)))
	h.mustPay(sk, o["id"].(string))
	r := h.get("/v1/orders/"+o["id"].(string)+"/tickets", sk)
	wantStatus(h.t, r, http.StatusOK)
	return r.json(h.t)
}

// codesOf are an order's signed codes: the order's, then each ticket's.
func codesOf(t *testing.T, tickets map[string]any) []string {
	t.Helper()
	codes := []string{tickets["qr_payload"].(string)}
	for _, x := range tickets["tickets"].([]any) {
		c, _ := x.(map[string]any)["qr_payload"].(string)
		if c == "" {
			t.Fatalf("a ticket without its own qr_payload: %v", x)
		}
		codes = append(codes, c)
	}
	return codes
}

// verifyBoth runs the Go and the JavaScript reference verifiers on codes
// with the JWK set at now, fails when they disagree, and returns which verified.
func verifyBoth(t *testing.T, jwks ticketcode.JWKS, now time.Time, codes []string) []bool {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(jwks)
	keys := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(keys, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("..", "..", "scripts", "door", "verify.js"), keys, now.Format(time.RFC3339))
	cmd.Stdin = strings.NewReader(strings.Join(codes, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verifier: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(codes) {
		t.Fatalf("node verifier answered %d lines for %d codes: %s", len(lines), len(codes), out)
	}
	set := ticketcode.FromJWKS(jwks)
	valid := make([]bool, len(codes))
	for i, code := range codes {
		var js struct {
			Valid  bool           `json:"valid"`
			Claims map[string]any `json:"claims"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &js); err != nil {
			t.Fatal(err)
		}
		c, err := ticketcode.Verify(code, set, now)
		if (err == nil) != js.Valid {
			t.Fatalf("verifiers disagree on %s: Go %v, JavaScript %s", code, err, lines[i])
		}
		if js.Valid && js.Claims["ticket_number"] != c.TicketNumber {
			t.Errorf("verifiers read different tickets: %s / %s", c.TicketNumber, lines[i])
		}
		valid[i] = js.Valid
	}
	return valid
}

func (h *harness) jwks(org string) ticketcode.JWKS {
	h.t.Helper()
	ks, err := h.srv.TicketKeys.KeySet(context.Background(), ticketing.Tenant{OrganizerID: org, Environment: ticketing.EnvTest})
	if err != nil {
		h.t.Fatal(err)
	}
	return ks.JWKSet(h.clk.Now())
}

// Real codes the service issued verify in both reference verifiers and name
// the order, event and seat; any change to a seat, order or ticket, or
// another organizer's key, makes them invalid in both.
func TestTicketCodes_IssuedCodesVerifyInGoAndJavaScriptAndTamperedOnesDoNot(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	tk := h.paidSeatedOrder(sk, "door-codes", "seat_A1", "seat_B2")
	codes := codesOf(t, tk)
	jwks := h.jwks(orgA)
	for i, ok := range verifyBoth(t, jwks, h.clk.Now(), codes) {
		if !ok {
			t.Errorf("issued code %d does not verify: %s", i, codes[i])
		}
	}
	set := ticketcode.FromJWKS(jwks)
	order, _ := ticketcode.Verify(codes[0], set, h.clk.Now())
	first, _ := ticketcode.Verify(codes[1], set, h.clk.Now())
	tickets := tk["tickets"].([]any)
	if order.Kind() != ticketcode.KindOrder || len(order.Tickets) != 2 || order.OrderID != tk["order_id"] || order.EventID != "evt_theatre" {
		t.Errorf("order code claims %+v", order)
	}
	if first.TicketNumber != tickets[0].(map[string]any)["ticket_number"] || first.SeatID != "seat_A1" || first.OrderID != tk["order_id"] {
		t.Errorf("ticket code claims %+v", first)
	}
	if email := anna["email"].(string); strings.Contains(codes[0]+codes[1], email) {
		t.Errorf("a code names the buyer: %s", codes[1])
	}

	second := tickets[1].(map[string]any)["ticket_number"].(string)
	other := h.paidSeatedOrder(sk, "door-codes-2", "seat_A2")
	tampered := []string{
		strings.Replace(codes[1], `"seat_id":"seat_A1"`, `"seat_id":"seat_B2"`, 1),
		strings.Replace(codes[1], tk["order_id"].(string), other["order_id"].(string), 1),
		strings.Replace(codes[1], first.TicketNumber, second, 1),
		strings.Replace(codes[0], second, other["tickets"].([]any)[0].(map[string]any)["ticket_number"].(string), 1),
	}
	for i, ok := range verifyBoth(t, jwks, h.clk.Now(), tampered) {
		if ok {
			t.Errorf("tampered code %d verifies: %s", i, tampered[i])
		}
	}
	if _, err := ticketcode.Verify(codes[1], ticketcode.FromJWKS(h.jwks(orgB)), h.clk.Now()); !errors.Is(err, ticketcode.ErrInvalid) {
		t.Errorf("another organizer's keys verify the code: %v", err)
	}
	if ok := verifyBoth(t, h.jwks(orgB), h.clk.Now(), codes[1:2]); ok[0] {
		t.Error("another organizer's keys verify the code in JavaScript")
	}
}

// A rotation keeps the codes signed before it valid through the overlap,
// in both verifiers, and invalid after it; new codes use the new key.
func TestTicketCodes_RotationKeepsOldCodesThroughTheOverlapOnly(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	old := codesOf(t, h.paidSeatedOrder(sk, "rot-1", "seat_A1"))
	tenant := ticketing.Tenant{OrganizerID: orgA, Environment: ticketing.EnvTest}
	if _, err := h.srv.TicketKeys.(*ticketing.TicketKeys).Rotate(context.Background(), tenant, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	fresh := codesOf(t, h.paidSeatedOrder(sk, "rot-2", "seat_A2"))
	if kidOf(t, fresh[1]) == kidOf(t, old[1]) {
		t.Fatalf("a code after the rotation is signed by the old key %s", kidOf(t, old[1]))
	}
	all := append(append([]string{}, old...), fresh...)
	h.clk.Advance(time.Hour)
	for i, ok := range verifyBoth(t, h.jwks(orgA), h.clk.Now(), all) {
		if !ok {
			t.Errorf("code %d invalid within the overlap", i)
		}
	}
	h.clk.Advance(time.Hour)
	for i, ok := range verifyBoth(t, h.jwks(orgA), h.clk.Now(), all) {
		if ok != (i >= len(old)) {
			t.Errorf("code %d (old: %v) valid %v after the overlap", i, i < len(old), ok)
		}
	}
}

func kidOf(t *testing.T, code string) string {
	t.Helper()
	_, kid, _, err := ticketcode.Parse(code)
	if err != nil {
		t.Fatal(err)
	}
	return kid
}
