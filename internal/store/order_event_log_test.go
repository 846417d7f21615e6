package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"tix/internal/webhook"
)

// An event is in the log from the order change's own transaction, under its
// organizer environment's sharded GSI3 key, stays there after dispatch, and
// carries a ttl at least 30 days after its creation.
func TestOrderEventLogKeyAndRetention(t *testing.T) {
	t.Parallel()
	h := newHookEnv(t)
	ctx := context.Background()
	ev := h.paidEvent(t)
	if err := h.ws.Dispatch(ctx, ev.ID, nil); err != nil {
		t.Fatal(err)
	}
	got, want, ttl, err := h.st.Webhooks.EventLogKeys(ctx, ev.ID, ev.OrganizerID, string(ev.Environment))
	if err != nil {
		t.Fatal(err)
	}
	if got != want || !strings.HasPrefix(got, "OEVTS#"+ev.OrganizerID+"#"+string(ev.Environment)+"#") {
		t.Errorf("GSI3PK %q, want %q", got, want)
	}
	if floor := ev.CreatedAt.Add(30 * 24 * time.Hour).Unix(); ttl < floor {
		t.Errorf("ttl %d, want at least 30 days after creation (%d)", ttl, floor)
	}
	page, err := h.ws.ListOrderEvents(ctx, webhook.EventQuery{OrganizerID: ev.OrganizerID, Environment: ev.Environment, Limit: 10})
	if err != nil || len(page.Events) != 1 || page.Events[0].ID != ev.ID || page.HasMore {
		t.Fatalf("event log after dispatch: %+v %v, want %s", page, err, ev.ID)
	}
}
