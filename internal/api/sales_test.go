package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"tix/internal/auth"
)

func (h *harness) post(target, secret, body string, opts ...reqOpt) response {
	h.t.Helper()
	if secret != "" {
		opts = append([]reqOpt{bearer(secret)}, opts...)
	}
	return h.do(http.MethodPost, target, body, opts...)
}

func idem(k string) reqOpt { return header("Idempotency-Key", k) }

const buyer = `"buyer":{"email":"anna@example.com","name":"Anna","phone":"+79991234567"}`

// gaOrder is a general-admission order body for tier with quantity.
func gaOrder(tier string, qty int) string {
	return `{` + buyer + `,"tier_id":"` + tier + `","quantity":` + itoa(qty) + `}`
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSales_GeneralAdmissionOrderPaidThenTicketsThenRefund(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)

	r := h.post("/v1/orders", sk, gaOrder("evt_concert_ga", 2), idem("k1"))
	wantStatus(t, r, http.StatusCreated)
	o := r.json(t)
	id := o["id"].(string)
	if o["status"] != "pending" || o["total_price"].(float64) != 300000 || o["service_fee"].(float64) != 0 {
		t.Fatalf("order %s", r.body)
	}
	pay := o["payment"].(map[string]any)
	if !strings.HasPrefix(pay["qr_image"].(string), "data:image/png;base64,") || pay["qr_payload"] == "" {
		t.Fatalf("payment %v", pay)
	}
	// Replay: same order, 200.
	r2 := h.post("/v1/orders", sk, gaOrder("evt_concert_ga", 2), idem("k1"))
	wantStatus(t, r2, http.StatusOK)
	if r2.json(t)["id"] != id || r2.json(t)["poll_token"] != o["poll_token"] {
		t.Fatalf("replay %s", r2.body)
	}
	wantError(t, h.get("/v1/orders/"+id+"/tickets", sk), http.StatusConflict, "conflict", "")

	r = h.post("/v1/orders/"+id+"/simulate-payment", sk, "")
	wantStatus(t, r, http.StatusOK)
	if r.json(t)["status"] != "paid" || r.json(t)["is_paid"] != true {
		t.Fatalf("simulate %s", r.body)
	}
	r = h.get("/v1/orders/"+id+"/tickets", sk)
	wantStatus(t, r, http.StatusOK)
	tk := r.json(t)
	if tickets := tk["tickets"].([]any); len(tickets) != 2 || !strings.HasPrefix(tk["ticket_number"].(string), "TIX-") {
		t.Fatalf("tickets %s", r.body)
	}

	r = h.post("/v1/orders/"+id+"/refund", sk, `{"reason":"changed plans"}`)
	wantStatus(t, r, http.StatusOK)
	if r.json(t)["status"] != "pending" {
		t.Fatalf("refund %s", r.body)
	}
	wantError(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusConflict, "conflict", "")
	h.clk.Advance(31 * 1e9)
	r = h.get("/v1/orders/"+id+"/refund", sk)
	wantStatus(t, r, http.StatusOK)
	if r.json(t)["status"] != "completed" {
		t.Fatalf("refund after settle %s", r.body)
	}
	r = h.get("/v1/orders/"+id, sk)
	if r.json(t)["status"] != "refunded" {
		t.Fatalf("order after refund %s", r.body)
	}
	wantStatus(t, h.post("/v1/orders/"+id+"/refund", sk, ""), http.StatusOK)
}
