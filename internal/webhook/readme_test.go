package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"tix/internal/webhook"
)

// verifyTix is the receiver code docs/webhooks.md shows integrators, verbatim.
func verifyTix(header string, body []byte, secret string, now time.Time) bool {
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(t, 0)).Abs() > 300*time.Second {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs { // several v1 during a secret rotation: any may match
		if hmac.Equal(s, want) {
			return true
		}
	}
	return false
}

// The documented receiver (docs/webhooks.md) accepts what we sign (one secret, or either secret
// of a rotation) and refuses a tampered body, a stale timestamp and a wrong
// secret; and docs/webhooks.md still shows exactly this function.
func TestDocumentedReceiverVerifiesOurSignatures(t *testing.T) {
	now := time.Now()
	body := []byte(`{"id":"evt_1","type":"order.paid"}`)
	oldS, newS := webhook.NewSecret(), webhook.NewSecret()
	one := webhook.Sign(now, body, newS)
	both := webhook.Sign(now, body, newS, oldS)
	cases := []struct {
		name   string
		header string
		body   []byte
		secret string
		at     time.Time
		want   bool
	}{
		{"one secret", one, body, newS, now, true},
		{"rotation, new secret", both, body, newS, now, true},
		{"rotation, old secret", both, body, oldS, now, true},
		{"wrong secret", one, body, oldS, now, false},
		{"tampered body", one, []byte(`{"id":"evt_2","type":"order.paid"}`), newS, now, false},
		{"stale", one, body, newS, now.Add(301 * time.Second), false},
		{"from the future", one, body, newS, now.Add(-301 * time.Second), false},
		{"no header", "", body, newS, now, false},
	}
	for _, c := range cases {
		if got := verifyTix(c.header, c.body, c.secret, c.at); got != c.want {
			t.Errorf("%s: verifyTix = %v, want %v", c.name, got, c.want)
		}
	}
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	fn := s[strings.Index(s, "func verifyTix("):]
	fn = fn[:strings.Index(fn, "\n}\n")+3]
	if !strings.Contains(string(readme), fn) {
		t.Error("docs/webhooks.md no longer shows verifyTix exactly as tested here; copy it over")
	}
}
