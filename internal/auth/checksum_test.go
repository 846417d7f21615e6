package auth

import (
	"math/rand/v2"
	"regexp"
	"testing"

	"tix/internal/ticketing"
)

// TestChecksum_EveryIssuedKeyPassesAndOneChangeFails is the property test of
// the checksum rule (docs/secret-scanning.md): every key NewSecret issues
// matches SecretPattern (secret keys) and carries a valid checksum; changing
// any one character of its random part or checksum to another base62
// character makes it fail.
func TestChecksum_EveryIssuedKeyPassesAndOneChangeFails(t *testing.T) {
	pattern := regexp.MustCompile(`^` + SecretPattern + `$`)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		typ := []KeyType{Secret, Publishable}[i%2]
		env := []ticketing.Environment{ticketing.EnvTest, ticketing.EnvLive}[(i/2)%2]
		key := NewSecret(typ, env)
		if _, _, ok := ParseSecret(key); !ok || !HasChecksum(key) {
			t.Fatalf("issued key %q does not pass its own checksum", key)
		}
		if typ == Secret != pattern.MatchString(key) {
			t.Fatalf("issued key %q: matches the pattern = %v", key, pattern.MatchString(key))
		}
		prefix := len(string(typ)) + len(env) + 2
		pos := prefix + rng.IntN(secretLen+checksumLen)
		c := base62[rng.IntN(len(base62))]
		for c == key[pos] {
			c = base62[rng.IntN(len(base62))]
		}
		changed := key[:pos] + string(c) + key[pos+1:]
		if _, _, ok := ParseSecret(changed); ok {
			t.Fatalf("%q with one character changed (%q) still passes", key, changed)
		}
	}
}

// TestChecksum_KnownValueAndLegacyKeys pins the rule to a value an operator
// can recompute, and keeps keys issued before the checksum (32 characters,
// none after) valid.
func TestChecksum_KnownValueAndLegacyKeys(t *testing.T) {
	random := "0123456789ABCDEFGHIJKLMNOPQRSTUV"
	// CRC-32 (IEEE) of random is 0x5c339a43 (Python: zlib.crc32); in base62
	// with 6 digits, most significant first, that is 1ggZdL.
	if got := Checksum(random); got != "1ggZdL" {
		t.Fatalf("Checksum(%q) = %q, want 1ggZdL", random, got)
	}
	key := "sk_live_" + random + Checksum(random)
	if !HasChecksum(key) {
		t.Fatalf("%q fails", key)
	}
	legacy := "sk_live_" + random
	if _, _, ok := ParseSecret(legacy); !ok || HasChecksum(legacy) {
		t.Fatalf("legacy key %q: parses %v, has checksum %v", legacy, ok, HasChecksum(legacy))
	}
	for _, bad := range []string{"sk_live_" + random + "00000", "sk_live_" + random + "0000000", "sk_live_" + random + "00000!"} {
		if _, _, ok := ParseSecret(bad); ok {
			t.Errorf("%q parses", bad)
		}
	}
}
