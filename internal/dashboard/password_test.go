package dashboard

import (
	"strings"
	"testing"
)

func TestPassword_Argon2idRoundTrip(t *testing.T) {
	h := HashPassword("correct horse battery")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not an argon2id PHC string with the documented parameters", h)
	}
	if !VerifyPassword("correct horse battery", h) {
		t.Error("the right password does not verify")
	}
	for _, wrong := range []string{"correct horse batter", "", "Correct horse battery"} {
		if VerifyPassword(wrong, h) {
			t.Errorf("%q verifies", wrong)
		}
	}
	if h2 := HashPassword("correct horse battery"); h2 == h {
		t.Error("two hashes of one password are equal: no random salt")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=999999999,t=1,p=1$c2FsdA$aGFzaA", "plain"} {
		if VerifyPassword("x", bad) {
			t.Errorf("malformed hash %q verifies", bad)
		}
	}
	if VerifyNoAccount("x") {
		t.Error("VerifyNoAccount succeeded")
	}
}

func TestCheckPassword(t *testing.T) {
	if CheckPassword("short") == nil {
		t.Error("a 5-character password is accepted")
	}
	if CheckPassword(strings.Repeat("x", MaxPassword+1)) == nil {
		t.Error("an over-long password is accepted")
	}
	if err := CheckPassword("ten chars!"); err != nil {
		t.Errorf("a 10-character password: %v", err)
	}
}
