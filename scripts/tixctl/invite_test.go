package main

import (
	"context"
	"strings"
	"testing"

	"tix/internal/dashboard/account"
)

// organizers invite stores a single-use invitation with the role, prints
// its link once and writes the email job; bad input is a usage error.
func TestOrganizersInvite(t *testing.T) {
	c, st := newCLI(t)
	c.json(0, &struct{}{}, "organizers", "create", "--name", "Acme", "--id", "org_inv")
	var out invitation
	c.json(0, &out, "organizers", "invite", "--id", "org_inv", "--email", "First.Owner@Example.com", "--dashboard-url", "https://api.example/v1/dashboard/")
	if out.Email != "first.owner@example.com" || out.Role != "owner" || !out.Emailed ||
		!strings.HasPrefix(out.Link, "https://api.example/v1/dashboard/invite?t=") {
		t.Fatalf("invitation %+v", out)
	}
	secret := out.Link[strings.Index(out.Link, "t=")+2:]
	tok, err := st.Accounts().GetToken(context.Background(), account.HashSecret(secret))
	if err != nil || tok.Purpose != account.PurposeInvite || tok.OrganizerID != "org_inv" || tok.Role != account.Owner || tok.InvitedBy != "operator" {
		t.Fatalf("stored invitation %+v %v", tok, err)
	}
	for _, args := range [][]string{
		{"organizers", "invite", "--id", "org_inv", "--email", "not-an-address"},
		{"organizers", "invite", "--id", "org_inv", "--email", "a@example.com", "--role", "admin"},
	} {
		if code, _, _ := c.run(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, _ := c.run("organizers", "invite", "--id", "org_nobody", "--email", "a@example.com"); code != 1 {
		t.Errorf("unknown organizer: exit %d, want 1", code)
	}
}
