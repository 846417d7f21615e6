package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tix/internal/testenv"
	"tix/internal/webhook"
)

// sampleReceivers are the starters of the Go sample receiver (in this
// process) and the Node one (node receiver.js): each starts one with secret
// and returns its hook URL and what it printed so far.
func sampleReceivers(t *testing.T) map[string]func(secret string) (string, func() string) {
	return map[string]func(string) (string, func() string){
		"go": func(secret string) (string, func() string) {
			out := &testenv.SyncBuffer{}
			srv := httptest.NewServer(newReceiver(secret, out).mux("/hooks"))
			t.Cleanup(srv.Close)
			return srv.URL + "/hooks", out.String
		},
		"node": func(secret string) (string, func() string) {
			url, out := testenv.StartListening(t, "node", filepath.Join(".", "receiver.js"), "--addr", "127.0.0.1:0", "--secret", secret)
			return url, out.String
		},
	}
}

// postSigned POSTs body to url signed as a tix delivery is (both header sets).
func postSigned(t *testing.T, url, id, body, secret string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	sig := webhook.SignAll(id, time.Now(), []byte(body), secret)
	req.Header.Set(webhook.SignatureHeader, sig.Tix)
	req.Header.Set(webhook.StandardIDHeader, sig.ID)
	req.Header.Set(webhook.StandardTimestampHeader, sig.Timestamp)
	req.Header.Set(webhook.StandardSignatureHeader, sig.Standard)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Each sample receiver (Go and Node) answers endpoint.verify with its nonce,
// refuses a wrong signature, handles an event delivered twice once, and keeps
// refunded when order.paid (version 2) arrives after order.refunded (version
// 3), as GET /hooks/orders shows.
func TestSampleReceiversDedupeAndKeepTheNewestVersion(t *testing.T) {
	const secret = "whsec_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"
	refunded := `{"id":"evt_r","type":"order.refunded","data":{"order":{"id":"ord_1","status":"refunded","version":3}}}`
	paid := `{"id":"evt_p","type":"order.paid","data":{"order":{"id":"ord_1","status":"paid","version":2}}}`
	for name, start := range sampleReceivers(t) {
		t.Run(name, func(t *testing.T) {
			url, out := start(secret)
			if code, body := postSigned(t, url, "evt_v", `{"id":"evt_v","type":"endpoint.verify","data":{"nonce":"vn_abc"}}`, secret); code != 200 || !strings.Contains(body, `"nonce":"vn_abc"`) {
				t.Errorf("endpoint.verify: %d %s, want 200 with the nonce", code, body)
			}
			if code, _ := postSigned(t, url, "evt_x", paid, "whsec_wrong"); code != 400 {
				t.Errorf("a wrong secret: %d, want 400", code)
			}
			for _, p := range []struct{ id, body string }{{"evt_r", refunded}, {"evt_p", paid}, {"evt_r", refunded}} {
				if code, body := postSigned(t, url, p.id, p.body, secret); code != 200 {
					t.Fatalf("%s: %d %s, want 200", p.id, code, body)
				}
			}
			res, err := http.Get(url + "/orders")
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			_, _ = b.ReadFrom(res.Body)
			_ = res.Body.Close()
			var kept map[string]orderState
			if err := json.Unmarshal(b.Bytes(), &kept); err != nil || kept["ord_1"] != (orderState{Status: "refunded", Version: 3}) {
				t.Errorf("kept %s (%v), want ord_1 refunded at version 3", b.String(), err)
			}
			printed := out()
			for _, want := range []string{"REFUSED", "verified order.refunded evt_r ord_1 refunded (version 3)\n",
				"verified order.paid evt_p ord_1 paid (version 2), older than the kept refunded (version 3): ignored\n",
				"duplicate order.refunded evt_r ord_1: already handled, ignored\n"} {
				if strings.Count(printed, want) != 1 {
					t.Errorf("printed %q, want %q once", printed, want)
				}
			}
		})
	}
}
