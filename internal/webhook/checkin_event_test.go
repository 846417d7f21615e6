package webhook_test

import (
	"encoding/json"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// ticket.checked_in is opt-in: an endpoint that names it receives one event
// per admission, signed like the others, with the check-in as data; an
// endpoint with the default types (or "*") receives none.
func TestCheckedInEventsReachOnlyTheEndpointsThatNameThem(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	app.EnableDoor(h.a)
	control, door := newReceiver(t), newReceiver(t)
	h.endpoint(control, true)
	_, secret := h.endpoint(door, true, ticketing.EventTicketCheckedIn)
	if _, _, err := h.a.Webhooks.CreateEndpoint(h.ctx, webhook.NewEndpoint{OrganizerID: h.tenant.OrganizerID, Environment: h.tenant.Environment,
		URL: door.srv.URL + "/x", EnabledEvents: []string{"ticket.checked_out"}}); err == nil {
		t.Error("an unknown event type was accepted")
	}
	o, err := h.a.Sales.Orders.Simulate(h.ctx, h.tenant, h.order(h.a.Sales).ID, ticketing.OutcomePaid)
	if err != nil {
		t.Fatal(err)
	}
	number := o.Tickets[0].Number
	first, err := h.a.CheckIns.Scan(h.ctx, h.tenant, ticketing.Scan{Code: number, Gate: "north", KeyID: "key_l"})
	if err != nil || first.Result != ticketing.ResultAdmitted {
		t.Fatalf("scan: %+v %v", first, err)
	}
	again, err := h.a.CheckIns.Scan(h.ctx, h.tenant, ticketing.Scan{Code: number, Gate: "south", KeyID: "key_l"})
	if err != nil || again.Result != ticketing.ResultAlreadyAdmitted {
		t.Fatalf("rescan: %+v %v", again, err)
	}
	var e received
	testenv.WaitFor(t, 30*time.Second, "ticket.checked_in at the door's endpoint", func() bool {
		for _, got := range door.events() {
			if got.Env.Type == ticketing.EventTicketCheckedIn {
				e = got
				return true
			}
		}
		return false
	})
	checkSigned(t, e, secret)
	var data struct {
		CheckIn map[string]any `json:"check_in"`
	}
	if err := json.Unmarshal(e.Env.Data, &data); err != nil {
		t.Fatal(err)
	}
	ci := data.CheckIn
	if ci["id"] != first.CheckIn.ID || ci["ticket_number"] != number || ci["order_id"] != o.ID || ci["event_id"] != o.EventID || ci["gate"] != "north" {
		t.Errorf("data.check_in %v", ci)
	}
	h.settled()
	n := 0
	for _, got := range door.events() {
		if got.Env.Type == ticketing.EventTicketCheckedIn {
			n++
		} else if got.Env.Type == ticketing.EventOrderPaid {
			t.Error("the check-ins endpoint got order.paid")
		}
	}
	if n != 1 {
		t.Errorf("%d ticket.checked_in events for one admission and one rescan", n)
	}
	for _, got := range control.events() {
		if got.Env.Type == ticketing.EventTicketCheckedIn {
			t.Error("an endpoint with the default event types got ticket.checked_in")
		}
	}
}

func TestSubscribes_StarAndTheDefaultsLeaveOutOptInTypes(t *testing.T) {
	for _, c := range []struct {
		events []string
		want   bool
	}{{[]string{"*"}, false}, {webhook.EventTypes, false}, {[]string{ticketing.EventTicketCheckedIn}, true}} {
		ep := &webhook.Endpoint{EnabledEvents: c.events}
		if got := ep.Subscribes(ticketing.EventTicketCheckedIn); got != c.want {
			t.Errorf("%v subscribes to ticket.checked_in: %v, want %v", c.events, got, c.want)
		}
	}
}
