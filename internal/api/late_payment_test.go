package api_test

import (
	"net/http"
	"testing"
	"time"

	"tix/internal/auth"
)

// simulate-payment's late_payment (test mode) runs the live path for money
// that reaches a cancelled order: reinstated while its stock is still there,
// refunded (and settled after the test provider's refund delay) once it went
// to another buyer; either way the order says so, and money is never kept
// without tickets.
func TestSimulateLatePayment_ReinstatesOrRefunds(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	ok := h.mustOrder(sk, "late-ok", gaBody("tier_stand", 10))["id"].(string)
	gone := h.mustOrder(sk, "late-gone", gaBody("tier_stand", 10))["id"].(string)
	wantError(t, h.simulate(sk, ok, "late_payment"), http.StatusConflict, "conflict", "")

	h.clk.Advance(16 * time.Minute) // both expire: the 40 standing tickets are free again
	for _, id := range []string{ok, gone} {
		if r := h.get("/v1/orders/"+id, sk); r.json(t)["status"] != "cancelled" {
			t.Fatalf("after expiry: %s", r.body)
		}
	}
	for _, k := range []string{"late-taker-1", "late-taker-2", "late-taker-3"} {
		h.mustOrder(sk, k, gaBody("tier_stand", 10)) // 10 of the 40 left
	}

	r := h.simulate(sk, ok, "late_payment")
	wantStatus(t, r, http.StatusOK)
	o := r.json(t)
	if lp, _ := o["late_payment"].(map[string]any); o["status"] != "paid" || o["is_paid"] != true || lp["outcome"] != "reinstated" || lp["cancelled_at"] == nil {
		t.Fatalf("late payment with the stock there: %s", r.body)
	}
	wantStatus(t, h.get("/v1/orders/"+ok+"/tickets", sk), http.StatusOK)

	r = h.simulate(sk, gone, "late_payment") // 0 left
	wantStatus(t, r, http.StatusOK)
	o = r.json(t)
	if lp, _ := o["late_payment"].(map[string]any); o["status"] != "cancelled" || o["is_paid"] != false || lp["outcome"] != "refund_pending" || lp["refunded_at"] != nil {
		t.Fatalf("late payment with the stock gone: %s", r.body)
	}
	again := h.simulate(sk, gone, "late_payment")
	if wantStatus(t, again, http.StatusOK); again.json(t)["late_payment"].(map[string]any)["outcome"] != "refund_pending" {
		t.Fatalf("simulated twice: %s", again.body)
	}
	h.clk.Advance(31 * time.Second) // the test provider's refund delay (30 s here)
	r = h.get("/v1/orders/"+gone, sk)
	if lp, _ := r.json(t)["late_payment"].(map[string]any); lp["outcome"] != "refunded" || lp["refunded_at"] == nil {
		t.Fatalf("after the refund delay: %s", r.body)
	}
}
