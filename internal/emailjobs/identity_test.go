package emailjobs_test

import (
	"testing"

	"tix/internal/emailjobs"
)

// A sender name may not pass for an address; an organizer's name that
// stands in for a missing sender name loses the characters that would.
func TestSenderName_NoAddressLookalikes(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"Acme Live": true, "Клуб «Север»": true, "": true,
		"support@bank.example": false, "Bank <support@bank.example>": false, "Acme >": false, "Acme\r\nBcc: x": false,
	} {
		if err := emailjobs.ValidSenderName(name); (err == nil) != ok {
			t.Errorf("ValidSenderName(%q) = %v, want ok %v", name, err, ok)
		}
	}
	id := &emailjobs.Identity{Name: "Bank <support@bank.example>\r\n"}
	if got := id.From(); got != "Bank supportbank.example" {
		t.Errorf("From() of an organizer named %q = %q", id.Name, got)
	}
}
