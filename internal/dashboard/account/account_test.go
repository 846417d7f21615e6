package account

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

// Every role's permissions, including every denial.
func TestRoles_Permissions(t *testing.T) {
	want := map[Role]map[Permission]bool{
		Owner:     {SeeOverview: true, ManageAPI: true, ManageMembers: true, ReadAudit: true, ManageOrders: true, ReadOrders: true},
		Developer: {SeeOverview: true, ManageAPI: true, ReadOrders: true},
		Support:   {SeeOverview: true, ManageOrders: true, ReadOrders: true},
		Viewer:    {SeeOverview: true, ReadOrders: true},
	}
	all := []Permission{SeeOverview, ManageAPI, ManageMembers, ReadAudit, ManageOrders, ReadOrders}
	for _, r := range Roles {
		for _, p := range all {
			if got := r.Can(p); got != want[r][p] {
				t.Errorf("%s can %s: %v, want %v", r, p, got, want[r][p])
			}
		}
	}
	if Role("admin").Valid() || Role("admin").Can(SeeOverview) {
		t.Error("an unknown role is valid or can something")
	}
}
