package ticketing_test

import (
	"strings"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// The contract's derived order fields: is_paid only while paid, overdue from
// the instant the payment window ends, occurrence_tier_id only for an order
// of an occurrence, and livemode in the order's QR code from its environment.
func TestOrder_DerivedContractFields(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	lines := []ticketing.OrderLine{{TierID: "tier_a"}, {TierID: "tier_b"}}
	for _, c := range []struct {
		status  ticketing.OrderStatus
		paid    bool
		overdue bool // at ExpiresAt exactly
	}{
		{ticketing.OrderPending, false, true},
		{ticketing.OrderPaid, true, false},
		{ticketing.OrderRefunded, false, false},
		{ticketing.OrderCancelled, false, false},
	} {
		o := &ticketing.Order{Status: c.status, ExpiresAt: at, Lines: lines}
		if o.IsPaid() != c.paid || o.Overdue(at) != c.overdue || o.Overdue(at.Add(-time.Nanosecond)) {
			t.Errorf("%s: is_paid %v, overdue at expiry %v, a nanosecond before %v", c.status, o.IsPaid(), o.Overdue(at), o.Overdue(at.Add(-time.Nanosecond)))
		}
	}
	single := &ticketing.Order{Lines: lines}
	series := &ticketing.Order{OccurrenceID: "occ_1", Lines: lines}
	empty := &ticketing.Order{OccurrenceID: "occ_1"}
	if single.OccurrenceTierID() != "" || series.OccurrenceTierID() != "occ_1:tier_a" || empty.OccurrenceTierID() != "" {
		t.Errorf("occurrence_tier_id: single %q, series %q, no lines %q", single.OccurrenceTierID(), series.OccurrenceTierID(), empty.OccurrenceTierID())
	}
	if single.FirstTierID() != "tier_a" || empty.FirstTierID() != "" {
		t.Errorf("ticket_tier_id: %q, no lines %q", single.FirstTierID(), empty.FirstTierID())
	}
	live := &ticketing.Order{ID: "ord_1", Environment: ticketing.EnvLive}
	test := &ticketing.Order{ID: "ord_2", Environment: ticketing.EnvTest}
	if !strings.Contains(live.TicketQR(), `"livemode":true`) || !strings.Contains(test.TicketQR(), `"livemode":false`) {
		t.Errorf("QR livemode: live %s, test %s", live.TicketQR(), test.TicketQR())
	}
}
