package dashboard_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// softKey is a software passkey authenticator speaking WebAuthn's wire
// format (a P-256 key, "none" attestation) for the HTTP tests; the browser
// tests use Chromium's virtual authenticator instead. Its fields are what a
// forger would change.
type softKey struct {
	rpID, origin string
	id           []byte
	key          *ecdsa.PrivateKey
	handle       []byte
	count        uint32
	flags        byte // of the next answer: UP|UV by default
	tamper       bool // change the next assertion's counter after signing it
}

// Authenticator data flags (WebAuthn §6.1).
const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

var b64 = base64.RawURLEncoding

func newSoftKey(t *testing.T, rpID, origin string) *softKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return &softKey{rpID: rpID, origin: origin, id: id, key: key, flags: flagUP | flagUV}
}

// options is what both ceremonies' options carry that a key reads.
type options struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		User      struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"publicKey"`
}

func parseOptions(t *testing.T, body string) options {
	t.Helper()
	var o options
	if err := json.Unmarshal([]byte(body), &o); err != nil || o.PublicKey.Challenge == "" {
		t.Fatalf("ceremony options %q: %v", body, err)
	}
	return o
}

func (k *softKey) clientData(typ, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": k.origin, "crossOrigin": false})
	return b
}

func (k *softKey) authData(flags byte, extra []byte) []byte {
	rp := sha256.Sum256([]byte(k.rpID))
	out := append(rp[:], flags)
	out = binary.BigEndian.AppendUint32(out, k.count)
	return append(out, extra...)
}

// create answers add/begin's options: a new credential for the user.
func (k *softKey) create(t *testing.T, optsBody string) string {
	t.Helper()
	o := parseOptions(t, optsBody)
	handle, err := b64.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		t.Fatalf("user.id %q: %v", o.PublicKey.User.ID, err)
	}
	k.handle = handle
	pub, err := k.key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         int64(webauthncose.P256), XCoord: pub[1:33], YCoord: pub[33:],
	})
	if err != nil {
		t.Fatal(err)
	}
	att := make([]byte, 16) // AAGUID: none
	att = binary.BigEndian.AppendUint16(att, uint16(len(k.id)))
	att = append(append(att, k.id...), cose...)
	obj, err := webauthncbor.Marshal(struct {
		Fmt      string         `cbor:"fmt"`
		AttStmt  map[string]any `cbor:"attStmt"`
		AuthData []byte         `cbor:"authData"`
	}{"none", map[string]any{}, k.authData(k.flags|flagAT, att)})
	if err != nil {
		t.Fatal(err)
	}
	return k.credential(map[string]any{
		"clientDataJSON":    b64.EncodeToString(k.clientData("webauthn.create", o.PublicKey.Challenge)),
		"attestationObject": b64.EncodeToString(obj),
		"transports":        []string{"internal"},
	})
}

// get answers signin/begin's options with an assertion signed by the key
// (its count one higher).
func (k *softKey) get(t *testing.T, optsBody string) string {
	t.Helper()
	return k.sign(t, k.key, parseOptions(t, optsBody).PublicKey.Challenge)
}

// sign is an assertion for challenge signed with key (a forger's own key
// when not k's).
func (k *softKey) sign(t *testing.T, key *ecdsa.PrivateKey, challenge string) string {
	t.Helper()
	k.count++
	cd := k.clientData("webauthn.get", challenge)
	ad := k.authData(k.flags, nil)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	if k.tamper {
		ad[len(ad)-1]++
	}
	return k.credential(map[string]any{
		"clientDataJSON":    b64.EncodeToString(cd),
		"authenticatorData": b64.EncodeToString(ad),
		"signature":         b64.EncodeToString(sig),
		"userHandle":        b64.EncodeToString(k.handle),
	})
}

func (k *softKey) credential(response map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"id": b64.EncodeToString(k.id), "rawId": b64.EncodeToString(k.id), "type": "public-key",
		"authenticatorAttachment": "platform", "response": response, "clientExtensionResults": map[string]any{},
	})
	return string(b)
}
