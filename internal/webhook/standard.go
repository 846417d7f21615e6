package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com), sent on
// every POST beside Tix-Signature (docs/webhooks.md, Standard Webhooks).
const (
	StandardIDHeader        = "webhook-id"
	StandardTimestampHeader = "webhook-timestamp"
	StandardSignatureHeader = "webhook-signature"
)

// Signature is everything that signs one POST: the Tix-Signature value and
// the three Standard Webhooks headers. The zero value sends an empty
// Tix-Signature and no Standard Webhooks headers.
type Signature struct {
	Tix       string // Tix-Signature: t=<unix>,v1=<hex>...
	ID        string // webhook-id: the envelope's id, the same on every retry
	Timestamp string // webhook-timestamp: unix seconds
	Standard  string // webhook-signature: v1,<base64> [v1,<base64>...]
}

// SignAll signs body, whose envelope id is id, at t with every secret (the
// current one first, then the previous one during a rotation), both ways.
func SignAll(id string, t time.Time, body []byte, secrets ...string) Signature {
	return Signature{Tix: Sign(t, body, secrets...), ID: id,
		Timestamp: strconv.FormatInt(t.Unix(), 10), Standard: SignStandard(id, t, body, secrets...)}
}

// SignStandard returns the webhook-signature value of the Standard Webhooks
// specification: for each secret, "v1," and the standard base64 of the
// HMAC-SHA256 over "<id>.<unix seconds>.<body>", separated by spaces. The
// key is the whole secret string as bytes ("whsec_..." included), the same
// key as Tix-Signature's: the secret is base62, not base64, so verifier
// libraries take it in their raw form (docs/webhooks.md).
func SignStandard(id string, t time.Time, body []byte, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		m := hmac.New(sha256.New, []byte(s))
		m.Write([]byte(id))
		m.Write([]byte{'.'})
		m.Write([]byte(ts))
		m.Write([]byte{'.'})
		m.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}

// set writes the signature headers on h.
func (s Signature) set(h http.Header) {
	h.Set(SignatureHeader, s.Tix)
	if s.ID == "" {
		return
	}
	// Lower-case names, as the specification writes them (HTTP/1.1 ignores case;
	// direct map writes keep them as written).
	h[StandardIDHeader] = []string{s.ID}
	h[StandardTimestampHeader] = []string{s.Timestamp}
	h[StandardSignatureHeader] = []string{s.Standard}
}
