package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries the signature of every webhook POST (contract
// section 6, Signature).
const SignatureHeader = "Tix-Signature"

// Tolerance is how far a signature's timestamp may be from the receiver's
// clock, in either direction (contract section 6, Signature rule 4).
const Tolerance = 300 * time.Second

// Errors of Verify. Each is wrapped with detail; test with errors.Is.
var (
	// ErrNoSignature: the header is empty or carries no v1 signature.
	ErrNoSignature = errors.New("no v1 signature in the " + SignatureHeader + " header")
	// ErrMalformedHeader: the header is not a list of key=value pairs, or has
	// more than one t.
	ErrMalformedHeader = errors.New("malformed " + SignatureHeader + " header")
	// ErrTimestamp: t is missing, not a unix time in seconds, or further than
	// the tolerance from now.
	ErrTimestamp = errors.New("signature timestamp missing, invalid or outside the tolerance")
	// ErrSignatureMismatch: no v1 value is the HMAC of this body with this secret.
	ErrSignatureMismatch = errors.New("no signature matches the body and secret")
)

// Sign returns the Tix-Signature header value for body sent at t:
//
//	t=<unix seconds>,v1=<hex>[,v1=<hex>...]
//
// Each v1 is the lowercase hex HMAC-SHA256 of "<t>.<body>" keyed by one
// secret (the whole "whsec_..." string, as bytes), in the order given; during
// a rotation both the new and the old secret sign. With no secret the value
// is just "t=<unix>", which no receiver accepts.
func Sign(t time.Time, body []byte, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.Grow(len("t=") + len(ts) + len(secrets)*(len(",v1=")+2*sha256.Size))
	b.WriteString("t=")
	b.WriteString(ts)
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(signMAC(ts, body, s)))
	}
	return b.String()
}

// signMAC is HMAC-SHA256 over "<ts>.<body>" keyed by secret.
func signMAC(ts string, body []byte, secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a Tix-Signature header value against the raw request body (as
// received, before any JSON parsing) and the endpoint's secret. It is the
// reference receiver implementation:
//
//   - the header is a comma-separated list of key=value pairs; spaces around
//     them are ignored, and so are unknown keys (future schemes such as v2);
//   - exactly one t, a unix time in seconds, within tolerance of now in either
//     direction (tolerance <= 0 means Tolerance, 300 s);
//   - the request is genuine if any v1 value matches, compared in constant
//     time (during a secret rotation the header carries one v1 per secret).
//
// It returns nil, or an error wrapping ErrNoSignature, ErrMalformedHeader,
// ErrTimestamp or ErrSignatureMismatch.
func Verify(header string, body []byte, secret string, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = Tolerance
	}
	if strings.TrimSpace(header) == "" {
		return ErrNoSignature
	}
	var (
		ts     string
		hasT   bool
		sigs   [][]byte
		nonHex int
	)
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("%w: %q is not key=value", ErrMalformedHeader, clipText(part, 40))
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "t":
			if hasT {
				return fmt.Errorf("%w: more than one t", ErrMalformedHeader)
			}
			ts, hasT = v, true
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				nonHex++ // cannot match; still counts as a signature present
				continue
			}
			sigs = append(sigs, sig)
		}
	}
	if len(sigs) == 0 && nonHex == 0 {
		return ErrNoSignature
	}
	if !hasT {
		return fmt.Errorf("%w: no t", ErrTimestamp)
	}
	unix, ok := parseSigTime(ts)
	if !ok {
		return fmt.Errorf("%w: t=%q is not a unix time in seconds", ErrTimestamp, clipText(ts, 20))
	}
	if skew := now.Sub(time.Unix(unix, 0)).Abs(); skew > tolerance {
		return fmt.Errorf("%w: t is %s from now, more than %s", ErrTimestamp, skew.Round(time.Second), tolerance)
	}
	want := signMAC(ts, body, secret)
	match := false
	for _, sig := range sigs {
		if hmac.Equal(want, sig) {
			match = true
		}
	}
	if !match {
		return ErrSignatureMismatch
	}
	return nil
}

// parseSigTime parses t: decimal digits only (no sign, no fraction), at most 12
// of them (a timestamp in milliseconds is not one in seconds, and is rejected
// by the tolerance anyway).
func parseSigTime(s string) (int64, bool) {
	if s == "" || len(s) > 12 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// clipText shortens s to at most n bytes for an error message.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
