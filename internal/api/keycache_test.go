package api

import (
	"fmt"
	"testing"
	"time"

	"tix/internal/auth"
)

// The key cache never holds more than its bound; expired entries go first.
func TestKeyCache_BoundedExpiredFirst(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	c := &keyCache{max: 3}
	c.put("old", keyEntry{until: now.Add(time.Second)}, now)
	c.put("live", keyEntry{key: &auth.Key{ID: "key_live"}, until: now.Add(time.Hour)}, now)
	later := now.Add(2 * time.Second)
	for i := range 5 {
		c.put(fmt.Sprintf("miss-%d", i), keyEntry{until: later.Add(time.Minute)}, later)
		if len(c.entries) > 3 {
			t.Fatalf("cache holds %d entries, bound 3", len(c.entries))
		}
	}
	if _, ok := c.entries["old"]; ok {
		t.Error("an expired entry survived eviction")
	}
	if e, ok := c.get("miss-4", later); !ok || e.key != nil {
		t.Errorf("the newest miss is not cached: %+v %v", e, ok)
	}
	if _, ok := c.get("miss-4", later.Add(time.Minute)); ok {
		t.Error("an entry is served past its TTL")
	}
	// A zero TTL caches nothing.
	c.put("zero", keyEntry{until: later}, later)
	if _, ok := c.entries["zero"]; ok {
		t.Error("an entry with no lifetime was cached")
	}
}
