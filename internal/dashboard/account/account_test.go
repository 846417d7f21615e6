package account

import (
	"testing"
)

// Every role's permissions, including every denial.
func TestRoles_Permissions(t *testing.T) {
	want := map[Role]map[Permission]bool{
		Owner: {SeeOverview: true, ManageAPI: true, ManageMembers: true, ReadAudit: true, ManageOrders: true, ReadOrders: true,
			ManagePayments: true, ManageSettings: true},
		Developer: {SeeOverview: true, ManageAPI: true, ReadOrders: true},
		Support:   {SeeOverview: true, ManageOrders: true, ReadOrders: true},
		Viewer:    {SeeOverview: true, ReadOrders: true},
	}
	all := []Permission{SeeOverview, ManageAPI, ManageMembers, ReadAudit, ManageOrders, ReadOrders, ManagePayments, ManageSettings}
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
