package api_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"tix/internal/auth"
)

// form posts an accept page's form.
func (h *harness) form(target, token string) response {
	h.t.Helper()
	return h.do(http.MethodPost, target, "", func(r *http.Request) {
		body := url.Values{"token": {token}}.Encode()
		r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	})
}

// Transfers through the real router, every answer checked against the
// OpenAPI document: who may call, bad input with its field, one pending
// transfer per ticket, the accept page (GET shows, POST accepts once, a
// wrong secret is not found), cancel, and the contract's refund rules.
func TestTransfers_ThroughTheAPI(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	other, _ := h.key(orgB, auth.Secret)
	o := h.mustOrder(sk, "api-transfer", gaBody("evt_concert_ga", 2))
	h.mustPay(sk, o["id"].(string))
	r := h.get("/v1/orders/"+o["id"].(string)+"/tickets", sk)
	wantStatus(t, r, http.StatusOK)
	tk := r.json(t)
	tickets := tk["tickets"].([]any)
	first, second := tickets[0].(map[string]any)["ticket_number"].(string), tickets[1].(map[string]any)["ticket_number"].(string)
	to := `{"to":{"email":"friend@example.com","name":"Friend"}}`

	pk := h.pkKey(orgA)
	wantError(t, h.post("/v1/tickets/"+first+"/transfers", pk, to, fromShop()), http.StatusForbidden, "forbidden", "")
	noScope, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersRead))
	wantError(t, h.post("/v1/tickets/"+first+"/transfers", noScope, to), http.StatusForbidden, "insufficient_scope", "scope")
	wantError(t, h.post("/v1/tickets/"+first+"/transfers", sk, `{}`), http.StatusBadRequest, "invalid_request", "to")
	wantError(t, h.post("/v1/tickets/"+first+"/transfers", sk, `{"to":{"email":"nope"}}`), http.StatusBadRequest, "invalid_request", "to.email")
	wantError(t, h.post("/v1/tickets/"+tk["ticket_number"].(string)+"/transfers", sk, to), http.StatusBadRequest, "invalid_request", "ticket_number")
	wantError(t, h.post("/v1/tickets/TIX-ZZZZZZ/transfers", sk, to), http.StatusNotFound, "not_found", "")
	wantError(t, h.post("/v1/tickets/"+first+"/transfers", other, to), http.StatusNotFound, "not_found", "")

	r = h.post("/v1/tickets/"+first+"/transfers", sk, to)
	wantStatus(t, r, http.StatusCreated)
	tr := r.json(t)
	id := tr["id"].(string)
	if tr["status"] != "pending" || tr["ticket_number"] != first || tr["to"].(map[string]any)["email"] != "friend@example.com" {
		t.Fatalf("transfer %v", tr)
	}
	wantError(t, h.post("/v1/tickets/"+first+"/transfers", sk, to), http.StatusConflict, "conflict", "")
	wantError(t, h.post("/v1/orders/"+o["id"].(string)+"/refund", sk, `{}`), http.StatusConflict, "conflict", "")
	wantError(t, h.get("/v1/transfers/"+id, other), http.StatusNotFound, "not_found", "")

	link := h.offers.Link(t, id)
	page := h.do(http.MethodGet, link.Path+"?token=wrong", "")
	if page.StatusCode != http.StatusNotFound || !strings.Contains(string(page.body), "not valid") {
		t.Fatalf("the page with a wrong secret: %d %s", page.StatusCode, page.body)
	}
	page = h.do(http.MethodGet, link.RequestURI(), "")
	if page.StatusCode != http.StatusOK || !strings.Contains(string(page.body), first) || page.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the page: %d %v %s", page.StatusCode, page.Header, page.body)
	}
	if got := h.get("/v1/transfers/"+id, sk).json(t); got["status"] != "pending" {
		t.Fatalf("the page's GET accepted the transfer: %v", got)
	}
	token := link.Query().Get("token")
	if r := h.form(link.Path, "wrong"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("accept with a wrong secret: %d", r.StatusCode)
	}
	if r := h.form(link.Path, token); r.StatusCode != http.StatusOK {
		t.Fatalf("accept: %d %s", r.StatusCode, r.body)
	}
	if r := h.form(link.Path, token); r.StatusCode != http.StatusConflict || !strings.Contains(string(r.body), "already accepted") {
		t.Fatalf("accept twice: %d %s", r.StatusCode, r.body)
	}
	r = h.get("/v1/transfers/"+id, sk)
	wantStatus(t, r, http.StatusOK)
	tr = r.json(t)
	if tr["status"] != "accepted" || tr["new_order_id"] == nil || tr["accepted_at"] == nil {
		t.Fatalf("accepted transfer %v", tr)
	}
	wantError(t, h.del("/v1/transfers/"+id, sk, ""), http.StatusConflict, "conflict", "")
	wantError(t, h.post("/v1/orders/"+o["id"].(string)+"/refund", sk, `{}`), http.StatusConflict, "conflict", "")
	wantError(t, h.post("/v1/orders/"+tr["new_order_id"].(string)+"/refund", sk, `{}`), http.StatusUnprocessableEntity, "unsupported", "")
	if got := h.get("/v1/orders/"+o["id"].(string)+"/tickets", sk).json(t)["tickets"].([]any)[0].(map[string]any)["status"]; got != "transferred" {
		t.Errorf("old ticket status %v, want transferred", got)
	}
	wantScan(t, h.scan(sk, codesOf(t, tk)[1], "north"), "transferred")
	wantScan(t, h.scan(sk, tr["new_ticket_number"].(string), "north"), "admitted")

	r = h.post("/v1/tickets/"+second+"/transfers", sk, `{"to":{"email":"other@example.com"}}`)
	wantStatus(t, r, http.StatusCreated)
	id2 := r.json(t)["id"].(string)
	r = h.del("/v1/transfers/"+id2, sk, "")
	wantStatus(t, r, http.StatusOK)
	if c := r.json(t); c["status"] != "cancelled" || c["cancelled_at"] == nil {
		t.Fatalf("cancelled %v", c)
	}
	wantStatus(t, h.del("/v1/transfers/"+id2, sk, ""), http.StatusOK)
	if r := h.do(http.MethodGet, h.offers.Link(t, id2).RequestURI(), ""); r.StatusCode != http.StatusOK || !strings.Contains(string(r.body), "cancelled") {
		t.Fatalf("the page of a cancelled transfer: %d %s", r.StatusCode, r.body)
	}
}
