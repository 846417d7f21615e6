package keyring_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"tix/internal/keyring"
)

func TestParse_KeysInOrderTheFirstSeals(t *testing.T) {
	a, b := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	got, err := keyring.Parse(" new : " + base64.RawURLEncoding.EncodeToString(b) + " ,old:" + base64.StdEncoding.EncodeToString(a) + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "new" || !bytes.Equal(got[0].Key, b) || got[1].ID != "old" || !bytes.Equal(got[1].Key, a) {
		t.Fatalf("Parse = %+v, want new then old with their bytes", got)
	}
}

func TestParse_FirstFaultOfAnEntryIsReported(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, tc := range []struct{ name, ring, want string }{
		{"DuplicateBeforeBadKey", "k1:" + good + ",k1:not*base64", `"k1" appears more than once`},
		{"BadIDBeforeBadKey", "k.1:not*base64", `key id "k.1" is not valid`},
		{"ShortKey", "k1:" + base64.StdEncoding.EncodeToString(make([]byte, 16)), `key "k1" is 16 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := keyring.Parse(tc.ring)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasSuffix(err.Error(), keyring.Help) {
				t.Errorf("Parse(%q) = %v, want %q and the help", tc.ring, err, tc.want)
			}
		})
	}
}
