package waitroom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Tokens are stateless: <kind>.<base64url JSON claims>.<base64url HMAC-SHA256>
// over "<kind>.<claims>", under a key derived from the service's secret for
// the waiting room alone. The kind keeps one token from being used as another
// (a queue token is no admission).
const (
	kindChallenge = "qc"
	kindQueue     = "qt"
	kindAdmission = "qa"
)

// signer signs and opens the waiting room's tokens.
type signer struct{ key []byte }

func newSigner(secret []byte) signer {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("tix waiting room v1"))
	return signer{key: m.Sum(nil)}
}

func (s signer) mac(msg string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// sign returns the token of claims v.
func (s signer) sign(kind string, v any) string {
	b, _ := json.Marshal(v) // claims are plain structs: Marshal does not fail
	msg := kind + "." + base64.RawURLEncoding.EncodeToString(b)
	return msg + "." + base64.RawURLEncoding.EncodeToString(s.mac(msg))
}

// open checks tok's kind and signature and decodes its claims into v; false
// for anything else (a token of another kind, a changed byte, garbage).
func (s signer) open(kind, tok string, v any) bool {
	if len(tok) > 2048 {
		return false
	}
	i := strings.LastIndexByte(tok, '.')
	if i < 0 {
		return false
	}
	msg, sig := tok[:i], tok[i+1:]
	k, body, ok := strings.Cut(msg, ".")
	if !ok || k != kind {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(msg)) {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}
