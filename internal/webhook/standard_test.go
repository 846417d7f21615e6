package webhook_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"tix/internal/webhook"
)

const (
	stdSecretA = "whsec_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"
	stdSecretB = "whsec_zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJ"
)

// signedHeader is the header a Sender would send for sig.
func signedHeader(sig webhook.Signature) http.Header {
	h := http.Header{}
	h.Set(webhook.SignatureHeader, sig.Tix)
	h.Set(webhook.StandardIDHeader, sig.ID)
	h.Set(webhook.StandardTimestampHeader, sig.Timestamp)
	h.Set(webhook.StandardSignatureHeader, sig.Standard)
	return h
}

// goStandardVerify checks a POST with the Go Standard Webhooks library, the
// secret taken raw as docs/webhooks.md tells receivers to.
func goStandardVerify(t *testing.T, secret string, header http.Header, body []byte) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhookRaw([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(body, header)
}

// nodeStandardVerify checks POSTs with the npm standardwebhooks package
// (scripts/webhookreceiver/standard-verify.js) and returns, per POST, whether
// it verified.
func nodeStandardVerify(t *testing.T, secret string, headers []http.Header, bodies [][]byte) []bool {
	t.Helper()
	var in strings.Builder
	for i, h := range headers {
		flat := map[string]string{}
		for k := range h {
			flat[strings.ToLower(k)] = h.Get(k)
		}
		line, _ := json.Marshal(map[string]any{"headers": flat, "body": string(bodies[i])})
		in.Write(line)
		in.WriteByte('\n')
	}
	cmd := exec.Command("node", filepath.Join("..", "..", "scripts", "webhookreceiver", "standard-verify.js"), secret)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node standardwebhooks verifier: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(headers) {
		t.Fatalf("node verifier answered %d lines for %d POSTs: %s", len(lines), len(headers), out)
	}
	valid := make([]bool, len(lines))
	for i, l := range lines {
		var r struct {
			Valid bool   `json:"valid"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		valid[i] = r.Valid
	}
	return valid
}

// The Standard Webhooks headers verify with both maintained libraries, with
// either secret during a rotation, and not with another secret, another
// body, another id or another timestamp.
func TestStandardWebhooksVerifyWithTheLibraries(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1","type":"order.paid","api_version":"2026-06-01","data":{}}`)
	now := time.Now()
	one := webhook.SignAll("evt_1", now, body, stdSecretA)
	rot := webhook.SignAll("evt_1", now, body, stdSecretB, stdSecretA) // new secret first
	if strings.Count(rot.Standard, "v1,") != 2 || strings.Count(rot.Standard, " ") != 1 || rot.ID != "evt_1" {
		t.Fatalf("rotation signature %+v", rot)
	}
	tampered := []byte(strings.Replace(string(body), "paid", "refunded", 1))
	otherID := signedHeader(one)
	otherID.Set(webhook.StandardIDHeader, "evt_2")
	otherTS := signedHeader(one)
	otherTS.Set(webhook.StandardTimestampHeader, strconv.FormatInt(now.Unix()+60, 10))
	cases := []struct {
		name   string
		secret string
		header http.Header
		body   []byte
		valid  bool
	}{
		{"one secret", stdSecretA, signedHeader(one), body, true},
		{"another secret", stdSecretB, signedHeader(one), body, false},
		{"rotation, new secret", stdSecretB, signedHeader(rot), body, true},
		{"rotation, old secret", stdSecretA, signedHeader(rot), body, true},
		{"rotation, a third secret", "whsec_other", signedHeader(rot), body, false},
		{"tampered body", stdSecretA, signedHeader(one), tampered, false},
		{"another id", stdSecretA, otherID, body, false},
		{"another timestamp", stdSecretA, otherTS, body, false},
	}
	for _, c := range cases {
		err := goStandardVerify(t, c.secret, c.header, c.body)
		if (err == nil) != c.valid {
			t.Errorf("Go library, %s: %v, want valid=%v", c.name, err, c.valid)
		}
		if !c.valid && !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
			t.Errorf("Go library, %s: %v, want no matching signature", c.name, err)
		}
	}
	for _, secret := range []string{stdSecretA, stdSecretB, "whsec_other"} {
		var hs []http.Header
		var bs [][]byte
		var want []bool
		for _, c := range cases {
			if c.secret == secret {
				hs, bs, want = append(hs, c.header), append(bs, c.body), append(want, c.valid)
			}
		}
		got := nodeStandardVerify(t, secret, hs, bs)
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("npm standardwebhooks, secret %s, POST %d: valid=%v, want %v", secret[:8], i, got[i], want[i])
			}
		}
	}
	// Tix-Signature still carries the same secrets.
	for _, s := range []string{stdSecretA, stdSecretB} {
		if err := webhook.Verify(rot.Tix, body, s, now, 0); err != nil {
			t.Errorf("Tix-Signature with %s: %v", s[:8], err)
		}
	}
}
