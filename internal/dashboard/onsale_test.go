package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
)

// The Events page's waiting room form protects the event through the
// waiting room service (read in the organizer's time zone, named beside
// the field), shows it protected with the form offered as a change, and is
// audited; bad input is refused on the page, a viewer is refused, and
// another organizer's event is not found.
func TestWaitingRoomForm_ProtectsAndRefuses(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("onsale-http@example.com", "On-sale")
	h.get(c, "/lang/en?back=/")
	h.importedTier(c, o)
	ev := h.onlyEvent(o)
	path := "/o/" + o + "/test/events/" + ev.ID + "/waiting-room"
	if p := h.get(c, "/o/"+o+"/test/events"); !strings.Contains(p.body, "Sale opens <small>(Asia/Yekaterinburg)</small>") {
		t.Errorf("the form does not name the time zone its opening is read in:\n%s", p.body)
	}
	for _, bad := range [][]string{{"opens_at", "tomorrow"}, {"opens_at", "2030-01-01T10:00", "rate", "-1"}} {
		if p := h.post(c, path, bad...); p.status != http.StatusBadRequest || !strings.Contains(p.body, "alert error") {
			t.Errorf("%v: %d, want 400 with the reason", bad, p.status)
		}
	}
	p := h.post(c, path, "opens_at", "2030-01-01T10:00", "rate", "300", "difficulty", "10")
	if p.status != http.StatusOK || !strings.Contains(p.body, "The waiting room is on.") || !strings.Contains(p.body, "Change the waiting room") {
		t.Fatalf("protect: %d\n%s", p.status, p.body)
	}
	got, err := h.a.Waitroom.Protection(h.ctx, ticketing.Tenant{OrganizerID: o, Environment: ticketing.EnvTest}, ev.ID)
	want := time.Date(2030, 1, 1, 5, 0, 0, 0, time.UTC) // 10:00 in Yekaterinburg (+05)
	if err != nil || !got.OpensAt.Equal(want) || got.Rate != 300 || got.Difficulty != 10 {
		t.Fatalf("stored %+v %v, want opening %s, 300/s, 10 bits", got, err, want)
	}
	if a := auditActions(h, o); !strings.HasPrefix(a, "onsale.protect,") {
		t.Errorf("audit log %s", a)
	}
	viewer := h.member(o, "onsale-viewer@example.com", account.Viewer)
	if p := h.post(viewer, path, "opens_at", "2030-02-01T10:00"); p.status != http.StatusForbidden {
		t.Errorf("a viewer protects: %d, want 403", p.status)
	}
	if p := h.get(viewer, "/o/"+o+"/test/events"); strings.Contains(p.body, "/waiting-room") {
		t.Error("a viewer is offered the form")
	}
	cb, orgB := h.owner("onsale-b@example.com", "B")
	if p := h.post(cb, "/o/"+orgB+"/test/events/"+ev.ID+"/waiting-room", "opens_at", "2030-02-01T10:00"); p.status != http.StatusNotFound {
		t.Errorf("B protects A's event: %d, want 404", p.status)
	}
	if got, _ := h.a.Waitroom.Protection(h.ctx, ticketing.Tenant{OrganizerID: o, Environment: ticketing.EnvTest}, ev.ID); !got.OpensAt.Equal(want) {
		t.Errorf("the protection changed after refused requests: %+v", got)
	}
}
