// Package keylist fetches and caches a secret scanning partner's published
// verification keys (GitHub's https://api.github.com/meta/public_keys/secret_scanning):
// {"public_keys": [{"key_identifier", "key" (PEM, ECDSA P-256), "is_current"}]}.
package keylist

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"tix/internal/secretscan"
)

// DefaultURL is GitHub's list of secret scanning keys.
const DefaultURL = "https://api.github.com/meta/public_keys/secret_scanning"

// DefaultMinRefetch is the least time between two fetches of the list, so a
// stream of reports naming unknown keys (anyone can send them) makes tix ask
// the partner at most once a minute per process.
const DefaultMinRefetch = time.Minute

// maxListBytes bounds the list read (GitHub's is about 1 KB).
const maxListBytes = 1 << 20

// List is a partner's published keys, fetched from URL and kept for TTL. A
// key identifier the kept list does not hold makes it fetch the list again at
// once (the partner may have rotated), at most once per MinRefetch; a key the
// list no longer holds (retired) is refused.
type List struct {
	URL        string
	TTL        time.Duration
	MinRefetch time.Duration // 0: DefaultMinRefetch
	Client     *http.Client  // nil: a client with a 5 s timeout (half the webhooks function's)
	Now        func() time.Time

	mu      sync.Mutex
	keys    map[string]*ecdsa.PublicKey
	fetched time.Time // when keys were fetched
	tried   time.Time // the last fetch, successful or not
}

var _ secretscan.PublicKeys = (*List)(nil)

// Key returns the published key id (secretscan.ErrUnknownKeyID when the list
// does not hold it).
func (l *List) Key(ctx context.Context, id string) (*ecdsa.PublicKey, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	fresh := l.keys != nil && now.Before(l.fetched.Add(l.TTL))
	if k, ok := l.keys[id]; ok && fresh {
		return k, nil
	}
	minGap := l.MinRefetch
	if minGap <= 0 {
		minGap = DefaultMinRefetch
	}
	if l.tried.IsZero() || !now.Before(l.tried.Add(minGap)) {
		l.tried = now
		keys, err := l.fetch(ctx)
		if err != nil && l.keys == nil {
			return nil, err
		}
		if err == nil {
			l.keys, l.fetched = keys, now
		}
	}
	if l.keys == nil { // never read: the report is not refused, it fails (and is sent again)
		return nil, fmt.Errorf("secret scanning keys %s: not read yet (next try within %s)", l.URL, minGap)
	}
	if k, ok := l.keys[id]; ok {
		return k, nil
	}
	return nil, secretscan.ErrUnknownKeyID
}

func (l *List) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

type published struct {
	PublicKeys []struct {
		ID        string `json:"key_identifier"`
		Key       string `json:"key"`
		IsCurrent bool   `json:"is_current"`
	} `json:"public_keys"`
}

// fetch reads the list; a key that is not an ECDSA P-256 public key in PEM
// is left out.
func (l *List) fetch(ctx context.Context) (map[string]*ecdsa.PublicKey, error) {
	c := l.Client
	if c == nil {
		c = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("secret scanning keys %s: %w", l.URL, err)
	}
	req.Header.Set("Accept", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("secret scanning keys %s: %w", l.URL, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("secret scanning keys %s: status %d", l.URL, res.StatusCode)
	}
	var p published
	if err := json.NewDecoder(io.LimitReader(res.Body, maxListBytes)).Decode(&p); err != nil {
		return nil, fmt.Errorf("secret scanning keys %s: %w", l.URL, err)
	}
	keys := map[string]*ecdsa.PublicKey{}
	for _, k := range p.PublicKeys {
		if pub := parseKey(k.Key); pub != nil && k.ID != "" {
			keys[k.ID] = pub
		}
	}
	return keys, nil
}

func parseKey(s string) *ecdsa.PublicKey {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil
	}
	ec, ok := pub.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil
	}
	return ec
}
