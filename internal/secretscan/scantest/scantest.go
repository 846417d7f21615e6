// Package scantest is a secret scanning partner for tests and the local
// stack: its own ECDSA P-256 keys, their published list served over HTTP in
// GitHub's format, and reports signed and sent as GitHub sends them
// (docs/secret-scanning.md).
package scantest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"tix/internal/secretscan"
)

// Reporter is the partner: its keys (the last one current), the list it
// publishes (KeysPath), and how many times that list was fetched.
type Reporter struct {
	srv *httptest.Server // New's; nil for one served elsewhere (Handler)

	mu      sync.Mutex
	keys    []*signingKey
	fetches int
}

type signingKey struct {
	id      string
	priv    *ecdsa.PrivateKey
	retired bool
}

// KeysPath is where a reporter's Handler serves its key list (GitHub's path).
const KeysPath = "/meta/public_keys/secret_scanning"

// ReportPath is where a reporter's Handler takes matches to sign and send.
const ReportPath = "/report"

// NewReporter makes a reporter with one current key, not served yet (Handler).
func NewReporter() *Reporter {
	r := &Reporter{}
	r.Rotate()
	return r
}

// New starts a reporter with one current key, its list served on a local
// port (KeysURL); Close stops it.
func New() *Reporter {
	r := NewReporter()
	r.srv = httptest.NewServer(r.Handler(""))
	return r
}

// Close stops serving the key list.
func (r *Reporter) Close() { r.srv.Close() }

// KeysURL is where New's reporter publishes its keys (TIX_SECRET_SCANNING_KEYS_URL).
func (r *Reporter) KeysURL() string { return r.srv.URL + KeysPath }

// Handler serves the key list at KeysPath and, when endpoint is set (tix's
// POST /v1/secret-scanning/github), POST ReportPath: a JSON array of matches
// that the reporter signs with its current key and sends to endpoint, as
// GitHub would; the answer is tix's status and body. The local stack serves
// it (scripts/local; tixctl scan-sim report).
func (r *Reporter) Handler(endpoint string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+KeysPath, r.serveKeys)
	if endpoint != "" {
		mux.HandleFunc("POST "+ReportPath, func(w http.ResponseWriter, req *http.Request) {
			body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			var ms []secretscan.Match
			if err == nil {
				err = json.Unmarshal(body, &ms)
			}
			if err != nil {
				http.Error(w, "want a JSON array of {token, type, url, source}", http.StatusBadRequest)
				return
			}
			body = Body(ms...)
			id := r.CurrentKeyID()
			out, err := Request(endpoint, body, id, r.Sign(id, body))
			if err == nil {
				var res *http.Response
				if res, err = http.DefaultClient.Do(out.WithContext(req.Context())); err == nil {
					defer res.Body.Close()
					w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
					w.WriteHeader(res.StatusCode)
					_, _ = io.Copy(w, res.Body)
					return
				}
			}
			http.Error(w, "sending the report to "+endpoint+": "+err.Error(), http.StatusBadGateway)
		})
	}
	return mux
}

// ReportRemote asks the reporter served at base (Handler) to sign matches and
// send them to tix; it returns tix's status and body.
func ReportRemote(ctx context.Context, base string, ms ...secretscan.Match) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+ReportPath, bytes.NewReader(Body(ms...)))
	if err != nil {
		return 0, nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("the secret scanning simulator at %s: %w (is make run running?)", base, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// Fetches is how many times the key list was fetched.
func (r *Reporter) Fetches() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fetches
}

// Rotate makes a new current key; the old ones stay published. It returns
// the new key's identifier (hex SHA-256 of its DER public key, as GitHub's).
func (r *Reporter) Rotate() string {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(der)
	k := &signingKey{id: hex.EncodeToString(sum[:]), priv: priv}
	r.mu.Lock()
	r.keys = append(r.keys, k)
	r.mu.Unlock()
	return k.id
}

// Retire takes the key with identifier id out of the published list; the
// reporter can still sign with it (a stale report).
func (r *Reporter) Retire(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		if k.id == id {
			k.retired = true
		}
	}
}

// CurrentKeyID is the identifier of the key reports are signed with.
func (r *Reporter) CurrentKeyID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys[len(r.keys)-1].id
}

func (r *Reporter) serveKeys(w http.ResponseWriter, _ *http.Request) {
	type pub struct {
		ID        string `json:"key_identifier"`
		Key       string `json:"key"`
		IsCurrent bool   `json:"is_current"`
	}
	r.mu.Lock()
	r.fetches++
	list := struct {
		PublicKeys []pub `json:"public_keys"`
	}{PublicKeys: []pub{}}
	for i, k := range r.keys {
		if k.retired {
			continue
		}
		der, _ := x509.MarshalPKIXPublicKey(&k.priv.PublicKey)
		p := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		list.PublicKeys = append(list.PublicKeys, pub{ID: k.id, Key: string(p), IsCurrent: i == len(r.keys)-1})
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// Sign returns the signature headers' values for body under the key with
// identifier id (CurrentKeyID for the current one).
func (r *Reporter) Sign(id string, body []byte) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		if k.id == id {
			sum := sha256.Sum256(body)
			sig, err := ecdsa.SignASN1(rand.Reader, k.priv, sum[:])
			if err != nil {
				panic(err)
			}
			return base64.StdEncoding.EncodeToString(sig)
		}
	}
	panic("scantest: no key " + id)
}

// Body is a report's body as GitHub sends it: the matches as a JSON array.
func Body(ms ...secretscan.Match) []byte {
	if ms == nil {
		ms = []secretscan.Match{}
	}
	b, err := json.Marshal(ms)
	if err != nil {
		panic(err)
	}
	return b
}

// Request builds the POST of body to endpoint with the given key identifier
// and signature headers ("" leaves a header out).
func Request(endpoint string, body []byte, keyID, signature string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if keyID != "" {
		req.Header.Set(secretscan.HeaderKeyID, keyID)
	}
	if signature != "" {
		req.Header.Set(secretscan.HeaderSignature, signature)
	}
	return req, nil
}

// Report signs matches with the current key, sends them to endpoint and
// returns the status and the feedback (nil unless 200).
func (r *Reporter) Report(c *http.Client, endpoint string, ms ...secretscan.Match) (int, []secretscan.Feedback, error) {
	body := Body(ms...)
	id := r.CurrentKeyID()
	req, err := Request(endpoint, body, id, r.Sign(id, body))
	if err != nil {
		return 0, nil, err
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		return res.StatusCode, nil, err
	}
	var fb []secretscan.Feedback
	if err := json.Unmarshal(b, &fb); err != nil {
		return res.StatusCode, nil, fmt.Errorf("feedback %s: %w", b, err)
	}
	return res.StatusCode, fb, nil
}
