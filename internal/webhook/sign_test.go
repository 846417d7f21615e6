package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"
)

const (
	secretA = "whsec_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"
	secretB = "whsec_zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJ"
)

var (
	signBody = []byte(`{"id":"evt_1","type":"order.paid","api_version":"2026-06-01","data":{}}`)
	signT    = time.Unix(1767225600, 0) // 2026-01-01T00:00:00Z
)

func TestSignFormat(t *testing.T) {
	h := Sign(signT, signBody, secretA, secretB)
	if !regexp.MustCompile(`^t=1767225600,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$`).MatchString(h) {
		t.Fatalf("header %q", h)
	}
	// The v1 value is computed independently here from the contract's words.
	m := hmac.New(sha256.New, []byte(secretA))
	m.Write([]byte("1767225600." + string(signBody)))
	if want := "v1=" + hex.EncodeToString(m.Sum(nil)); strings.Split(h, ",")[1] != want {
		t.Fatalf("first v1 %q, want %q", strings.Split(h, ",")[1], want)
	}
	if got := Sign(signT, signBody); got != "t=1767225600" {
		t.Fatalf("no secret: %q", got)
	}
	if SignatureHeader != "Tix-Signature" || Tolerance != 300*time.Second {
		t.Fatal("constants")
	}
}

func TestVerifyRoundTrip(t *testing.T) {
	h := Sign(signT, signBody, secretA)
	if err := Verify(h, signBody, secretA, signT, Tolerance); err != nil {
		t.Fatal(err)
	}
	// Within the tolerance, on both sides; 0 means the default.
	for _, d := range []time.Duration{-300 * time.Second, 300 * time.Second, 42 * time.Second} {
		if err := Verify(h, signBody, secretA, signT.Add(d), 0); err != nil {
			t.Fatalf("now %+v: %v", d, err)
		}
	}
	if err := Verify(h, signBody, secretB, signT, Tolerance); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatalf("other secret: %v", err)
	}
}

func TestVerifyTwoSecrets(t *testing.T) {
	h := Sign(signT, signBody, secretA, secretB)
	for _, s := range []string{secretA, secretB} {
		if err := Verify(h, signBody, s, signT, Tolerance); err != nil {
			t.Fatalf("%s: %v", s[:10], err)
		}
	}
	if err := Verify(h, signBody, "whsec_other", signT, Tolerance); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatalf("third secret: %v", err)
	}
}

func TestVerifyTamperedBody(t *testing.T) {
	h := Sign(signT, signBody, secretA)
	bad := []byte(strings.Replace(string(signBody), "order.paid", "order.refunded", 1))
	if err := Verify(h, bad, secretA, signT, Tolerance); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatalf("tampered body: %v", err)
	}
	// Re-serialised JSON (a space) is another body: receivers must verify raw bytes.
	if err := Verify(h, append([]byte(" "), signBody...), secretA, signT, Tolerance); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatalf("reformatted body: %v", err)
	}
	// Changing t invalidates the signature too.
	forged := strings.Replace(h, "t=1767225600", "t=1767225700", 1)
	if err := Verify(forged, signBody, secretA, signT, Tolerance); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatalf("changed t: %v", err)
	}
}

func TestVerifyTimestamp(t *testing.T) {
	h := Sign(signT, signBody, secretA)
	for _, d := range []time.Duration{301 * time.Second, -301 * time.Second, 24 * time.Hour} {
		err := Verify(h, signBody, secretA, signT.Add(d), Tolerance)
		if !errors.Is(err, ErrTimestamp) {
			t.Fatalf("now %+v: %v", d, err)
		}
	}
	if err := Verify(h, signBody, secretA, signT.Add(time.Minute), 30*time.Second); !errors.Is(err, ErrTimestamp) {
		t.Fatalf("custom tolerance: %v", err)
	}
}

func TestVerifyHeaderForms(t *testing.T) {
	v1a := strings.TrimPrefix(strings.Split(Sign(signT, signBody, secretA), ",")[1], "v1=")
	v1b := strings.TrimPrefix(strings.Split(Sign(signT, signBody, secretB), ",")[1], "v1=")
	ok := []string{
		"t=1767225600,v1=" + v1a,
		"v1=" + v1a + ",t=1767225600",                    // any order
		" t=1767225600 , v1=" + v1a + " ",                // spaces
		"t = 1767225600, v1 = " + v1a,                    // spaces around =
		"t=1767225600,v0=abc,v1=" + v1a + ",v2=whatever", // unknown schemes
		"t=1767225600,v1=" + v1b + ",v1=" + v1a,          // several v1, match not first
		"t=1767225600,v1=nothex,v1=" + v1a,               // a garbled v1 beside a good one
		"t=1767225600,,v1=" + v1a,                        // empty part
		"t=1767225600,v1=" + strings.ToUpper(v1a),        // upper-case hex
	}
	for _, h := range ok {
		if err := Verify(h, signBody, secretA, signT, Tolerance); err != nil {
			t.Errorf("%q: %v", h, err)
		}
	}
	bad := []struct {
		header string
		want   error
	}{
		{"", ErrNoSignature},
		{"   ", ErrNoSignature},
		{"t=1767225600", ErrNoSignature},
		{"t=1767225600,v0=" + v1a, ErrNoSignature},
		{"v1=" + v1a, ErrTimestamp},
		{"t=,v1=" + v1a, ErrTimestamp},
		{"t=abc,v1=" + v1a, ErrTimestamp},
		{"t=-1767225600,v1=" + v1a, ErrTimestamp},
		{"t=+1767225600,v1=" + v1a, ErrTimestamp},
		{"t=1767225600.5,v1=" + v1a, ErrTimestamp},
		{"t=1767225600000,v1=" + v1a, ErrTimestamp}, // milliseconds
		{"t=99999999999999999999999,v1=" + v1a, ErrTimestamp},
		{"t=1767225600,t=1767225600,v1=" + v1a, ErrMalformedHeader},
		{"t=1767225600;v1=" + v1a, ErrNoSignature}, // one pair: t="1767225600;v1=..."
		{"t=1767225600,v1:" + v1a, ErrMalformedHeader},
		{"garbage", ErrMalformedHeader},
		{"t=1767225600,v1=", ErrSignatureMismatch},
		{"t=1767225600,v1=zz", ErrSignatureMismatch},
		{"t=1767225600,v1=" + v1a[:62], ErrSignatureMismatch}, // short
		{"t=1767225600,v1=" + v1b, ErrSignatureMismatch},
		{"t=1767225600,v1=" + v1a + "00", ErrSignatureMismatch}, // long
	}
	for _, c := range bad {
		err := Verify(c.header, signBody, secretA, signT, Tolerance)
		if !errors.Is(err, c.want) {
			t.Errorf("%q: got %v, want %v", c.header, err, c.want)
		}
	}
	// The sentinels are distinct.
	all := []error{ErrNoSignature, ErrMalformedHeader, ErrTimestamp, ErrSignatureMismatch}
	for i, a := range all {
		for j, b := range all {
			if i != j && errors.Is(a, b) {
				t.Errorf("%v is %v", a, b)
			}
		}
	}
}

// TestStripeInterop proves that an independent implementation of the same
// scheme, stripe-go's webhook.ValidatePayload, accepts our signatures. It uses
// the real clock because ValidatePayload does (time.Since).
func TestStripeInterop(t *testing.T) {
	now := time.Now()

	h := Sign(now, signBody, secretA)
	if err := stripewebhook.ValidatePayload(signBody, h, secretA); err != nil {
		t.Fatalf("single secret: %v", err)
	}

	rot := Sign(now, signBody, secretB, secretA) // new first, old second
	if strings.Count(rot, "v1=") != 2 {
		t.Fatalf("rotation header %q", rot)
	}
	for _, s := range []string{secretA, secretB} {
		if err := stripewebhook.ValidatePayload(signBody, rot, s); err != nil {
			t.Fatalf("rotation header with %s...: %v", s[:10], err)
		}
	}
	if err := stripewebhook.ValidatePayload(signBody, rot, "whsec_other"); !errors.Is(err, stripewebhook.ErrNoValidSignature) {
		t.Fatalf("unknown secret: %v", err)
	}

	tampered := append([]byte{}, signBody...)
	tampered[len(tampered)-2] = ' '
	if err := stripewebhook.ValidatePayload(tampered, h, secretA); !errors.Is(err, stripewebhook.ErrNoValidSignature) {
		t.Fatalf("tampered body: %v", err)
	}
	if err := stripewebhook.ValidatePayload(signBody, Sign(now.Add(-10*time.Minute), signBody, secretA), secretA); !errors.Is(err, stripewebhook.ErrTooOld) {
		t.Fatalf("old timestamp: %v", err)
	}

	// And the other way round: we accept stripe-go's test signatures.
	sp := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: signBody, Secret: secretA, Timestamp: now})
	if err := Verify(sp.Header, signBody, secretA, now, Tolerance); err != nil {
		t.Fatalf("stripe-go header %q: %v", sp.Header, err)
	}
	if got, want := sp.Header, Sign(now, signBody, secretA); got != want {
		t.Fatalf("stripe-go header %q, ours %q", got, want)
	}
	if !strings.HasPrefix(h, "t="+strconv.FormatInt(now.Unix(), 10)+",") {
		t.Fatalf("header %q", h)
	}
}
