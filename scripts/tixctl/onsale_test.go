package main

import (
	"context"
	"testing"

	"tix/internal/catalogimport"
	"tix/internal/ticketing"
)

// onsale protect stores the waiting room on the event (--json stable), for
// the event's own organizer only, and refuses bad flags with exit 2.
func TestOnsaleProtect_StoresTheWaitingRoomOnTheEvent(t *testing.T) {
	c, st := newCLI(t)
	var org struct{ ID string }
	c.json(0, &org, "organizers", "create", "--name", "Onsale", "--id", "org_onsale")
	var imported struct{}
	c.json(0, &imported, "catalog", "import", "--organizer", "org_onsale", writeFile(t, "catalog.json", cliCatalog))
	event := catalogimport.CatalogEventID("org_onsale", "rock")
	var v protectionView
	c.json(0, &v, "onsale", "protect", "--organizer", "org_onsale", "--event", event, "--opens-at", "2026-12-01T10:00:00Z", "--rate", "800", "--difficulty", "12")
	if v.EventID != event || v.Rate != 800 || v.Difficulty != 12 || v.OpensAt.Format("15:04") != "10:00" || v.Environment != "test" || v.QueuePage != "/v1/queue/"+event {
		t.Fatalf("protect = %+v", v)
	}
	p, err := st.WaitingRoom().GetProtection(context.Background(), event)
	if err != nil || p.Rate != 800 || p.OrganizerID != "org_onsale" || p.Environment != ticketing.EnvTest {
		t.Fatalf("stored protection %+v %v", p, err)
	}
	c.json(0, &v, "onsale", "protect", "--organizer", "org_onsale", "--event", event, "--opens-at", "2026-12-01T10:00:00Z")
	if v.Rate != 5000 || v.Difficulty != 16 {
		t.Errorf("defaults: %+v", v)
	}
	var failed cliError
	c.json(1, &failed, "onsale", "protect", "--organizer", "org_other", "--event", event, "--opens-at", "2026-12-01T10:00:00Z")
	if failed.Error.Code != "not_found" {
		t.Errorf("another organizer's event: %+v", failed)
	}
	for _, args := range [][]string{
		{"--organizer", "org_onsale", "--event", event, "--opens-at", "tomorrow"},
		{"--organizer", "org_onsale", "--event", event, "--opens-at", "2026-12-01T10:00:00Z", "--difficulty", "40"},
		{"--organizer", "org_onsale", "--event", event},
	} {
		if code, _, _ := c.run(append([]string{"onsale", "protect"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
