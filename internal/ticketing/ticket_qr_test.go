package ticketing

import (
	"encoding/json"
	"testing"
)

func TestTicketQRFor_NamesTheTicketAndAdmitsOne(t *testing.T) {
	o := &Order{ID: "ord_1", EventID: "evt_1", TicketNumber: "TIX-ORDER1", Quantity: 3, Environment: EnvLive}
	var got, order map[string]any
	if err := json.Unmarshal([]byte(o.TicketQRFor("TIX-T2")), &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(o.TicketQR()), &order)
	if got["ticket_number"] != "TIX-T2" || got["quantity"] != 1.0 || got["order_id"] != "ord_1" || got["livemode"] != true {
		t.Errorf("ticket QR %v", got)
	}
	for k := range order {
		if _, ok := got[k]; !ok {
			t.Errorf("the ticket QR lacks the order QR's %q", k)
		}
	}
	if o.TicketQRFor("TIX-T1") == o.TicketQRFor("TIX-T2") {
		t.Error("two tickets share a QR payload")
	}
}
