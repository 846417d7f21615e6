package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's first recommended set (19 MiB, 2 passes, one
// lane), about 30 ms on one Lambda vCPU. Stored in each hash, so they can be
// raised later without invalidating existing hashes.
const (
	argonMemory  = 19 * 1024 // KiB
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16
)

// Password length rules (NIST SP 800-63B: at least 8, allow long passphrases).
const (
	MinPassword = 10
	MaxPassword = 256
)

// CheckPassword says what is wrong with a new password, or nil.
func CheckPassword(p string) error {
	switch n := utf8.RuneCountInString(p); {
	case n < MinPassword:
		return fmt.Errorf("use at least %d characters", MinPassword)
	case len(p) > MaxPassword:
		return fmt.Errorf("use at most %d bytes", MaxPassword)
	}
	return nil
}

// HashPassword hashes p with argon2id under a random salt, as a PHC string:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>.
func HashPassword(p string) string {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	key := argon2.IDKey([]byte(p), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding.EncodeToString
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads, enc(salt), enc(key))
}

var errBadHash = errors.New("not an argon2id hash")

// VerifyPassword reports whether p matches hash, in constant time over the
// derived key. A malformed hash never matches.
func VerifyPassword(p, hash string) bool {
	ok, err := verify(p, hash)
	return err == nil && ok
}

func verify(p, hash string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var v int
	var m uint32
	var t uint32
	var th uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &th); err != nil || m == 0 || m > 256*1024 || t == 0 || t > 10 || th == 0 {
		return false, errBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 64 {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(p), salt, t, m, th, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is verified against when no account has the address, so that
// signing in takes as long whether the address exists or not.
var dummyHash = HashPassword("no account has this address")

// VerifyNoAccount spends the time a verification takes, and fails.
func VerifyNoAccount(p string) bool {
	_ = VerifyPassword(p, dummyHash)
	return false
}
