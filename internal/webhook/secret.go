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

	"tix/internal/keyring"
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
func NewAESBox(ring string) (SecretBox, error) {
	keys, err := keyring.Parse(ring)
	if err != nil {
		return nil, err
	}
	return NewAESBoxKeys(keys)
}

// NewAESBoxKeys returns the AES-256-GCM SecretBox of parsed keys (see
// NewAESBox); the first key seals, every key opens.
func NewAESBoxKeys(keys []keyring.KeyEntry) (SecretBox, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("keyring is empty; %s", keyring.Help)
	}
	b := &aesBox{keys: map[string]cipher.AEAD{}, sealID: keys[0].ID}
	for _, k := range keys {
		if _, dup := b.keys[k.ID]; dup {
			return nil, fmt.Errorf("keyring key id %q appears more than once; each key needs its own id; %s", k.ID, keyring.Help)
		}
		block, err := aes.NewCipher(k.Key)
		if err != nil {
			return nil, fmt.Errorf("keyring key %q: %v", k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("keyring key %q: %v", k.ID, err)
		}
		b.keys[k.ID] = aead
	}
	return b, nil
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
