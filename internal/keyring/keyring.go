// Package keyring parses the webhook keyring setting (TIX_WEBHOOK_KEYRING)
// into plain keys. It sits below both internal/config, which validates the
// setting at start, and internal/webhook, which builds its secret box from the
// keys, so that neither reaches up into the other.
package keyring

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// KeySize is the length of every key: AES-256.
const KeySize = 32

// Help is appended to every keyring error: what a valid value looks like.
const Help = "a keyring is id:base64key[,id:base64key...], each key 32 random bytes in base64 " +
	"(make one with: head -c 32 /dev/urandom | base64); the first key seals, every key opens"

// KeyEntry is one key of a keyring: its id (1 to 32 letters, digits, '-' or
// '_', unique in the keyring) and its 32 raw bytes.
type KeyEntry struct {
	ID  string
	Key []byte
}

// Parse reads a keyring
//
//	id:base64key[,id:base64key...]
//
// in order (the first key seals). A key is standard or URL-safe base64,
// padded or not. Errors end with Help and never contain key material.
func Parse(keyring string) ([]KeyEntry, error) {
	if strings.TrimSpace(keyring) == "" {
		return nil, fmt.Errorf("keyring is empty; %s", Help)
	}
	var out []KeyEntry
	seen := map[string]bool{}
	for i, entry := range strings.Split(keyring, ",") {
		k, err := parseEntry(i+1, entry, seen)
		if err != nil {
			return nil, err
		}
		seen[k.ID] = true
		out = append(out, k)
	}
	return out, nil
}

// parseEntry reads entry n (1-based) of a keyring whose earlier ids are seen.
func parseEntry(n int, entry string, seen map[string]bool) (KeyEntry, error) {
	entry = strings.TrimSpace(entry)
	if entry == "" {
		return KeyEntry{}, fmt.Errorf("keyring entry %d is empty; %s", n, Help)
	}
	id, key, ok := strings.Cut(entry, ":")
	id, key = strings.TrimSpace(id), strings.TrimSpace(key)
	if !ok || id == "" {
		return KeyEntry{}, fmt.Errorf("keyring entry %d has no id (want id:base64key); %s", n, Help)
	}
	if !validKeyID(id) {
		return KeyEntry{}, fmt.Errorf("keyring key id %q is not valid: use 1 to 32 letters, digits, '-' or '_'; %s", clip(id, 32), Help)
	}
	if seen[id] {
		return KeyEntry{}, fmt.Errorf("keyring key id %q appears more than once; each key needs its own id; %s", id, Help)
	}
	raw, ok := decodeKey(key)
	if !ok {
		return KeyEntry{}, fmt.Errorf("keyring key %q is not valid base64; %s", id, Help)
	}
	if len(raw) != KeySize {
		return KeyEntry{}, fmt.Errorf("keyring key %q is %d bytes, AES-256 needs 32; %s", id, len(raw), Help)
	}
	return KeyEntry{ID: id, Key: raw}, nil
}

func validKeyID(id string) bool {
	if len(id) == 0 || len(id) > 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// decodeKey accepts standard or URL-safe base64, padded or not.
func decodeKey(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err := enc.DecodeString(s); err == nil {
			return raw, true
		}
	}
	return nil, false
}

// clip shortens s to at most n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
