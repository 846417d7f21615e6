package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// SecretPrefix starts every endpoint signing secret (contract section 6).
const SecretPrefix = "whsec_"

// secretAlphabet is base62: a secret is one word to double-click, copy and
// paste into an environment variable, with no '+', '/' or '=' to escape.
const secretAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// secretChars is how many base62 digits 32 bytes need: 62^43 > 2^256.
const secretChars = 43

// NewSecret returns a new endpoint signing secret: "whsec_" followed by 32
// bytes from crypto/rand written as a 43-character base62 number (0-9, A-Z,
// a-z; big-endian, zero-padded on the left), 49 characters in all.
func NewSecret() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand aborts the program instead)
	n := new(big.Int).SetBytes(b[:])
	out := make([]byte, secretChars)
	base, rem := big.NewInt(int64(len(secretAlphabet))), new(big.Int)
	for i := secretChars - 1; i >= 0; i-- {
		n.QuoRem(n, base, rem)
		out[i] = secretAlphabet[rem.Int64()]
	}
	return SecretPrefix + string(out)
}

// SecretBox encrypts endpoint signing secrets at rest. Seal and Open bind aad
// (the endpoint id): a value sealed for one endpoint does not open for
// another. NewAESBox is the implementation from configuration; a KMS-backed
// box may implement it later.
type SecretBox interface {
	Seal(plaintext, aad string) (string, error)
	Open(sealed, aad string) (string, error)
}

// ErrCannotOpen: a sealed secret is not in the sealed format, was sealed with
// a key that is not in the keyring, was sealed for another aad, or was altered.
var ErrCannotOpen = errors.New("sealed secret cannot be opened")

// keyringHelp is appended to every keyring error: what a valid value looks like.
const keyringHelp = "a keyring is id:base64key[,id:base64key...], each key 32 random bytes in base64 " +
	"(make one with: head -c 32 /dev/urandom | base64); the first key seals, every key opens"

// sealedVersion starts every value sealed by the AES box.
const sealedVersion = "v1"

type aesBox struct {
	sealID string                 // id of the first key, which seals
	keys   map[string]cipher.AEAD // every key, by id, which open
}

// NewAESBox returns a SecretBox using AES-256-GCM with keys from keyring:
//
//	id:base64key[,id:base64key...]
//
// Each id is 1 to 32 letters, digits, '-' or '_', unique in the keyring; each
// key is 32 bytes in standard base64 (padding optional; URL-safe base64 is
// accepted too), e.g. the output of `head -c 32 /dev/urandom | base64`. The
// first key seals; every key opens, so a key is rotated by prepending the new
// one and keeping the old until every secret has been sealed again.
//
// A sealed value is "v1.<keyid>.<base64url(nonce|ciphertext)>" (unpadded
// base64url, 12-byte random nonce, ciphertext with its 16-byte tag), and aad
// is GCM's additional data. Errors never contain key material.
func NewAESBox(keyring string) (SecretBox, error) {
	if strings.TrimSpace(keyring) == "" {
		return nil, fmt.Errorf("keyring is empty; %s", keyringHelp)
	}
	b := &aesBox{keys: map[string]cipher.AEAD{}}
	for i, entry := range strings.Split(keyring, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("keyring entry %d is empty; %s", i+1, keyringHelp)
		}
		id, key, ok := strings.Cut(entry, ":")
		id, key = strings.TrimSpace(id), strings.TrimSpace(key)
		if !ok || id == "" {
			return nil, fmt.Errorf("keyring entry %d has no id (want id:base64key); %s", i+1, keyringHelp)
		}
		if !validKeyID(id) {
			return nil, fmt.Errorf("keyring key id %q is not valid: use 1 to 32 letters, digits, '-' or '_'; %s", clipText(id, 32), keyringHelp)
		}
		if _, dup := b.keys[id]; dup {
			return nil, fmt.Errorf("keyring key id %q appears more than once; each key needs its own id; %s", id, keyringHelp)
		}
		raw, ok := decodeKey(key)
		if !ok {
			return nil, fmt.Errorf("keyring key %q is not valid base64; %s", id, keyringHelp)
		}
		if len(raw) != 32 {
			return nil, fmt.Errorf("keyring key %q is %d bytes, AES-256 needs 32; %s", id, len(raw), keyringHelp)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("keyring key %q: %v", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("keyring key %q: %v", id, err)
		}
		b.keys[id] = aead
		if i == 0 {
			b.sealID = id
		}
	}
	return b, nil
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

// Seal encrypts plaintext for aad with the first key of the keyring.
func (b *aesBox) Seal(plaintext, aad string) (string, error) {
	aead := b.keys[b.sealID]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	rand.Read(nonce) // never fails (crypto/rand aborts the program instead)
	out := aead.Seal(nonce, nonce, []byte(plaintext), []byte(aad))
	return sealedVersion + "." + b.sealID + "." + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a value sealed for aad by any key of the keyring. Every
// failure wraps ErrCannotOpen.
func (b *aesBox) Open(sealed, aad string) (string, error) {
	ver, rest, ok1 := strings.Cut(sealed, ".")
	id, data, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || ver != sealedVersion || id == "" {
		return "", fmt.Errorf("%w: not a %s.<keyid>.<data> value", ErrCannotOpen, sealedVersion)
	}
	aead, ok := b.keys[id]
	if !ok {
		return "", fmt.Errorf("%w: sealed with key %q, which is not in the keyring", ErrCannotOpen, clipText(id, 32))
	}
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return "", fmt.Errorf("%w: data is not base64url of nonce and ciphertext", ErrCannotOpen)
	}
	ns := aead.NonceSize()
	plain, err := aead.Open(nil, raw[:ns], raw[ns:], []byte(aad))
	if err != nil {
		return "", fmt.Errorf("%w: authentication failed (another endpoint's value, or altered)", ErrCannotOpen)
	}
	return string(plain), nil
}
