package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tix/internal/webhook"
)

// The receiver answers a signed endpoint.verify with its nonce, prints a
// signed event as verified, and refuses a body signed with another secret.
func TestReceiverVerifiesAndAnswersTheNonce(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var out bytes.Buffer
	rc := receiver{secret: "whsec_right", out: &out, now: func() time.Time { return now }}
	post := func(body, secret string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(body))
		req.Header.Set(webhook.SignatureHeader, webhook.Sign(now, []byte(body), secret))
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, req)
		return w
	}
	w := post(`{"id":"evt_1","type":"endpoint.verify","data":{"nonce":"vn_abc"}}`, "whsec_right")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "vn_abc") {
		t.Errorf("endpoint.verify: %d %s, want 200 with the nonce", w.Code, w.Body)
	}
	w = post(`{"id":"evt_2","type":"order.paid","data":{"order":{"id":"ord_1","status":"paid"}}}`, "whsec_right")
	if w.Code != 200 || !strings.Contains(out.String(), "verified order.paid evt_2 ord_1 paid\n") {
		t.Errorf("order.paid: %d, printed %q", w.Code, out.String())
	}
	w = post(`{"id":"evt_3","type":"order.paid","data":{"order":{"id":"ord_2"}}}`, "whsec_wrong")
	if w.Code != 400 || strings.Contains(out.String(), "evt_3") || !strings.Contains(out.String(), "REFUSED") {
		t.Errorf("a wrong signature: %d, printed %q; want 400 and REFUSED", w.Code, out.String())
	}
}
