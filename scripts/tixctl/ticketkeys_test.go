package main

import (
	"testing"
)

// ticket-keys list makes the first key; rotate makes a new signing key and
// keeps the old one verifying for the overlap given.
func TestTicketKeys_ListAndRotateWithAnOverlap(t *testing.T) {
	c, _ := newCLI(t)
	var first ticketKeysView
	c.json(0, &first, "ticket-keys", "list", "--organizer", "org_tk", "--env", "live")
	if len(first.Keys) != 1 || first.Keys[0].Status != "signing" || first.Keys[0].X == "" {
		t.Fatalf("first key %+v", first)
	}
	var rotated ticketKeysView
	c.json(0, &rotated, "ticket-keys", "rotate", "--organizer", "org_tk", "--env", "live", "--overlap", "48h")
	if len(rotated.Keys) != 2 || rotated.Keys[0].Status != "signing" || rotated.Keys[1].Kid != first.Keys[0].Kid ||
		rotated.Keys[1].Status != "verifying" || rotated.Keys[1].VerifyUntil == nil || rotated.Keys[1].RetiredAt == nil ||
		rotated.Keys[1].VerifyUntil.Sub(*rotated.Keys[1].RetiredAt).Hours() != 48 {
		t.Fatalf("after rotation %+v", rotated)
	}
	if code, _, _ := c.run("ticket-keys", "rotate", "--organizer", "org_tk", "--env", "prod"); code != 2 {
		t.Errorf("a bad --env: exit %d, want 2", code)
	}
	if code, _, _ := c.run("ticket-keys", "rotate", "--organizer", "org_tk", "--env", "live", "--overlap", "-1h"); code != 2 {
		t.Errorf("a negative overlap: exit %d, want 2", code)
	}
}
