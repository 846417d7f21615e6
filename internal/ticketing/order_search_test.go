package ticketing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// The dashboard's search: by buyer email (any case and spaces, as of now:
// an overdue pending order reads cancelled) and by ticket number (any case),
// never another tenant's order; a search that is not an address is
// invalid_request on email.
func TestOrderSearch_ByBuyerAndTicket(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	s := &ticketing.OrderSearch{Orders: d.sales.Orders, Finder: d.st.Orders}
	paid := d.order(t, "k1", gaOrder(1))
	if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, paid.ID, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	d.clk.Advance(time.Second)
	pending := d.order(t, "k2", gaOrder(1))
	got, err := s.ByBuyer(ctx, d.c.Tenant, " Buyer@EXAMPLE.com", 20)
	if err != nil || len(got) != 2 || got[0].ID != pending.ID || got[1].ID != paid.ID || got[1].Status != ticketing.OrderPaid {
		t.Fatalf("by buyer: %v, %v", got, err)
	}
	d.clk.Advance(time.Hour)
	if got, err = s.ByBuyer(ctx, d.c.Tenant, "buyer@example.com", 20); err != nil || got[0].Status != ticketing.OrderCancelled {
		t.Fatalf("an overdue pending order is read as cancelled: %v, %v", got, err)
	}
	for _, bad := range []string{"", "   ", "buyer", string(make([]byte, 300)) + "@x"} {
		_, err := s.ByBuyer(ctx, d.c.Tenant, bad, 20)
		wantCode(t, err, ticketing.CodeInvalidRequest, "email")
	}
	other := ticketing.Tenant{OrganizerID: "org_other", Environment: ticketing.EnvTest}
	if got, err := s.ByBuyer(ctx, other, "buyer@example.com", 20); err != nil || len(got) != 0 {
		t.Fatalf("another organizer finds %v, %v", got, err)
	}

	cur, err := d.sales.Orders.Order(ctx, d.c.Tenant, paid.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{cur.TicketNumber, " " + cur.Tickets[0].Number, strings.ToLower(cur.TicketNumber)} {
		if o, err := s.ByTicket(ctx, d.c.Tenant, n); err != nil || o.ID != paid.ID {
			t.Fatalf("ticket %q: %v, %v", n, o, err)
		}
	}
	_, err = s.ByTicket(ctx, other, cur.TicketNumber)
	wantCode(t, err, ticketing.CodeNotFound, "")
	_, err = s.ByTicket(ctx, ticketing.Tenant{OrganizerID: d.c.Tenant.OrganizerID, Environment: ticketing.EnvLive}, cur.TicketNumber)
	wantCode(t, err, ticketing.CodeNotFound, "")
	_, err = s.ByTicket(ctx, d.c.Tenant, "TIX-"+string(make([]byte, 100)))
	wantCode(t, err, ticketing.CodeNotFound, "")
}
