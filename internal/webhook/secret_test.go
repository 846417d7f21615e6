package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestNewSecret(t *testing.T) {
	re := regexp.MustCompile(`^whsec_[0-9A-Za-z]{43}$`)
	seen := map[string]bool{}
	for range 200 {
		s := NewSecret()
		if !re.MatchString(s) {
			t.Fatalf("secret %q", s)
		}
		if seen[s] {
			t.Fatalf("repeated %q", s)
		}
		seen[s] = true
	}
}

func newKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func mustBox(t *testing.T, keyring string) SecretBox {
	t.Helper()
	b, err := NewAESBox(keyring)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAESBoxRoundTrip(t *testing.T) {
	box := mustBox(t, "k1:"+newKey(t))
	secret := NewSecret()
	sealed, err := box.Seal(secret, "we_1")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^v1\.k1\.[A-Za-z0-9_-]+$`).MatchString(sealed) || strings.Contains(sealed, secret) {
		t.Fatalf("sealed %q", sealed)
	}
	got, err := box.Open(sealed, "we_1")
	if err != nil || got != secret {
		t.Fatalf("open: %q, %v", got, err)
	}
	again, _ := box.Seal(secret, "we_1")
	if again == sealed {
		t.Fatal("two seals of the same secret are equal (nonce reuse)")
	}
	empty, _ := box.Seal("", "we_1")
	if got, err := box.Open(empty, "we_1"); err != nil || got != "" {
		t.Fatalf("empty: %q, %v", got, err)
	}
}

func TestAESBoxWrongAAD(t *testing.T) {
	box := mustBox(t, "k1:"+newKey(t))
	sealed, _ := box.Seal(NewSecret(), "we_1")
	for _, aad := range []string{"we_2", "", "we_1 "} {
		if _, err := box.Open(sealed, aad); !errors.Is(err, ErrCannotOpen) {
			t.Fatalf("aad %q: %v", aad, err)
		}
	}
}

func TestAESBoxTampering(t *testing.T) {
	key := newKey(t)
	box := mustBox(t, "k1:"+key)
	sealed, _ := box.Seal(NewSecret(), "we_1")
	data := strings.TrimPrefix(sealed, "v1.k1.")
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw { // every byte: nonce, ciphertext and tag
		c := append([]byte{}, raw...)
		c[i] ^= 0x01
		if _, err := box.Open("v1.k1."+base64.RawURLEncoding.EncodeToString(c), "we_1"); !errors.Is(err, ErrCannotOpen) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	bad := []string{
		"",
		"v1",
		"v1.k1",
		"v2.k1." + data,
		"v1.." + data,
		"v1.k2." + data, // key not in keyring
		"v1.k1." + data[:10],
		"v1.k1." + data + "!",
		"v1.k1." + data[:len(data)-2],
		"v1.k1.",
	}
	for _, s := range bad {
		if _, err := box.Open(s, "we_1"); !errors.Is(err, ErrCannotOpen) {
			t.Errorf("%q: %v", s, err)
		}
	}
	// Another key under the same id does not open it either.
	other := mustBox(t, "k1:"+newKey(t))
	if _, err := other.Open(sealed, "we_1"); !errors.Is(err, ErrCannotOpen) {
		t.Fatalf("other key: %v", err)
	}
	// Errors do not leak the key.
	_, err = box.Open("v1.k1.AAAA", "we_1")
	if err == nil || strings.Contains(err.Error(), key) {
		t.Fatalf("error %v", err)
	}
}

func TestAESBoxRotation(t *testing.T) {
	oldKey, newK := newKey(t), newKey(t)
	before := mustBox(t, "old:"+oldKey)
	secret := NewSecret()
	sealedOld, _ := before.Seal(secret, "we_1")

	after := mustBox(t, "new:"+newK+", old:"+oldKey) // new key prepended
	if got, err := after.Open(sealedOld, "we_1"); err != nil || got != secret {
		t.Fatalf("old value after rotation: %q, %v", got, err)
	}
	sealedNew, _ := after.Seal(secret, "we_1")
	if !strings.HasPrefix(sealedNew, "v1.new.") {
		t.Fatalf("sealed with %q", sealedNew)
	}
	if got, err := after.Open(sealedNew, "we_1"); err != nil || got != secret {
		t.Fatalf("new value: %q, %v", got, err)
	}
	// The old keyring cannot open what the new key sealed.
	if _, err := before.Open(sealedNew, "we_1"); !errors.Is(err, ErrCannotOpen) || !strings.Contains(err.Error(), `"new"`) {
		t.Fatalf("new value, old keyring: %v", err)
	}
	// Once the old key is dropped, old values no longer open.
	dropped := mustBox(t, "new:"+newK)
	if _, err := dropped.Open(sealedOld, "we_1"); !errors.Is(err, ErrCannotOpen) {
		t.Fatalf("old key dropped: %v", err)
	}
}

func TestAESBoxKeyringForms(t *testing.T) {
	raw := make([]byte, 32)
	rand.Read(raw)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		kr := "a-1_B:" + enc.EncodeToString(raw)
		if _, err := NewAESBox(kr); err != nil {
			t.Errorf("%q: %v", kr, err)
		}
	}
	if _, err := NewAESBox("  k1 : " + newKey(t) + " ,k2:" + newKey(t) + "\n"); err != nil {
		t.Errorf("spaces: %v", err)
	}
}

func TestAESBoxBadKeyrings(t *testing.T) {
	good := newKey(t)
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	cases := []struct {
		keyring string
		want    string // in the message
	}{
		{"", "keyring is empty"},
		{"  ", "keyring is empty"},
		{good, "has no id"},
		{":" + good, "has no id"},
		{"k1:" + good + ",", "entry 2 is empty"},
		{"k1:" + good + ",,k2:" + good, "entry 2 is empty"},
		{"k.1:" + good, `key id "k.1" is not valid`},
		{"k 1:" + good, `key id "k 1" is not valid`},
		{strings.Repeat("k", 33) + ":" + good, "is not valid"},
		{"k1:" + good + ",k1:" + newKey(t), `"k1" appears more than once`},
		{"k1:not*base64", `key "k1" is not valid base64`},
		{"k1:", `key "k1" is 0 bytes`}, // empty is valid base64 of nothing
		{"k1:" + short, `key "k1" is 16 bytes, AES-256 needs 32`},
		{"k1:" + base64.StdEncoding.EncodeToString(make([]byte, 64)), "is 64 bytes"},
	}
	for _, c := range cases {
		_, err := NewAESBox(c.keyring)
		if err == nil {
			t.Errorf("%q: accepted", c.keyring)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) {
			t.Errorf("%q: %s (want %q)", c.keyring, msg, c.want)
		}
		if !strings.Contains(msg, "head -c 32 /dev/urandom | base64") {
			t.Errorf("%q: no help in %s", c.keyring, msg)
		}
		if strings.Contains(msg, good) {
			t.Errorf("%q: key material in %s", c.keyring, msg)
		}
	}
}

// The deployed stack's keyring is k1:<43 alphanumeric characters generated by
// Secrets Manager> (infra/stack.go): read as unpadded base64url, 32 bytes.
func TestAESBoxAcceptsTheStackGeneratedKeyring(t *testing.T) {
	for _, k := range []string{"k1:abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ", "k1:ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ", "k1:9999999999999999999999999999999999999999999"} {
		box, err := NewAESBox(k)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		sealed, err := box.Seal("whsec_x", "we_1")
		if err != nil {
			t.Fatal(err)
		}
		if plain, err := box.Open(sealed, "we_1"); err != nil || plain != "whsec_x" {
			t.Fatalf("%s: open %q %v", k, plain, err)
		}
	}
}
