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

// post sends body to h signed as tix signs a delivery (both header sets).
func post(h http.Handler, id, body, secret string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(body))
	sig := webhook.SignAll(id, time.Now(), []byte(body), secret)
	req.Header.Set(webhook.SignatureHeader, sig.Tix)
	req.Header.Set(webhook.StandardIDHeader, sig.ID)
	req.Header.Set(webhook.StandardTimestampHeader, sig.Timestamp)
	req.Header.Set(webhook.StandardSignatureHeader, sig.Standard)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// The receiver answers a signed endpoint.verify with its nonce, prints a
// signed event as verified, and refuses a body signed with another secret.
func TestReceiverVerifiesAndAnswersTheNonce(t *testing.T) {
	var out bytes.Buffer
	rc := newReceiver("whsec_right", &out)
	w := post(rc, "evt_1", `{"id":"evt_1","type":"endpoint.verify","data":{"nonce":"vn_abc"}}`, "whsec_right")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "vn_abc") {
		t.Errorf("endpoint.verify: %d %s, want 200 with the nonce", w.Code, w.Body)
	}
	w = post(rc, "evt_2", `{"id":"evt_2","type":"order.paid","data":{"order":{"id":"ord_1","status":"paid","version":2}}}`, "whsec_right")
	if w.Code != 200 || !strings.Contains(out.String(), "verified order.paid evt_2 ord_1 paid (version 2)\n") {
		t.Errorf("order.paid: %d, printed %q", w.Code, out.String())
	}
	w = post(rc, "evt_3", `{"id":"evt_3","type":"order.paid","data":{"order":{"id":"ord_2"}}}`, "whsec_wrong")
	if w.Code != 400 || strings.Contains(out.String(), "evt_3") || !strings.Contains(out.String(), "REFUSED") {
		t.Errorf("a wrong signature: %d, printed %q; want 400 and REFUSED", w.Code, out.String())
	}
}
