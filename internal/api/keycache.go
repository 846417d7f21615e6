package api

import (
	"context"
	"errors"
	"sync"
	"time"

	"tix/internal/auth"
)

// keyCache keeps the keys this process looked up, by hash, for a short time:
// found keys for Limits.KeyCacheTTL (a revocation, expiry change or new budget
// reaches this process within it: a revoked key stops being accepted at most
// KeyCacheTTL after the revocation) and unknown hashes for KeyMissTTL, so that
// random keys cost one read per process per KeyMissTTL and no write. It holds at most max entries; when full, expired entries go first, then
// arbitrary ones.
type keyCache struct {
	mu      sync.Mutex
	entries map[string]keyEntry
	max     int
}

type keyEntry struct {
	key   *auth.Key // nil: no key has this hash
	until time.Time
}

// keyCacheSize bounds the cache: a few MB at most.
const keyCacheSize = 10000

func (c *keyCache) get(hash string, now time.Time) (keyEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok || !now.Before(e.until) {
		return keyEntry{}, false
	}
	return e, true
}

func (c *keyCache) put(hash string, e keyEntry, now time.Time) {
	if !e.until.After(now) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]keyEntry{}
	}
	limit := c.max
	if limit <= 0 {
		limit = keyCacheSize
	}
	if _, ok := c.entries[hash]; !ok && len(c.entries) >= limit {
		for h, old := range c.entries {
			if !now.Before(old.until) {
				delete(c.entries, h)
			}
		}
		for h := range c.entries {
			if len(c.entries) < limit {
				break
			}
			delete(c.entries, h)
		}
	}
	c.entries[hash] = e
}

// drop forgets what the cache holds for hash: the next request with that key
// reads it again (this process revoked it).
func (c *keyCache) drop(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, hash)
}

// lookupKey finds the key of hash through the cache; auth.ErrUnknownKey when none has it.
func (s *Server) lookupKey(ctx context.Context, hash string, now time.Time) (*auth.Key, error) {
	if e, ok := s.keys.get(hash, now); ok {
		if e.key == nil {
			return nil, auth.ErrUnknownKey
		}
		return e.key, nil
	}
	k, err := s.Keys.LookupKey(ctx, hash)
	switch {
	case errors.Is(err, auth.ErrUnknownKey):
		s.keys.put(hash, keyEntry{until: now.Add(s.Limits.KeyMissTTL)}, now)
	case err == nil:
		s.keys.put(hash, keyEntry{key: k, until: now.Add(s.Limits.KeyCacheTTL)}, now)
	}
	return k, err
}
