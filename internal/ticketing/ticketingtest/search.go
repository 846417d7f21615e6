package ticketingtest

import (
	"slices"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// testFindOrders: the buyer index answers one buyer's orders of one tenant,
// whatever the case and spaces of the address, newest first, up to the
// limit; a ticket number (order-level or a ticket's) leads to its order in
// its environment only.
func testFindOrders(t *testing.T, f *fixture) {
	if f.st.Finder == nil {
		t.Fatal("the store under test has no OrderFinder")
	}
	e := f.event(t)
	mk := func(org, email string, at time.Duration) *ticketing.Order {
		o := f.gaOrder(1)
		o.OrganizerID, o.Buyer.Email, o.CreatedAt = org, email, f.now.Add(at)
		must(t, "create", f.st.OrderStore.CreateOrder(f.ctx, o, e, f.now))
		return o
	}
	a := mk(Org, "ann@example.com", 0)
	b := mk(Org, "  Ann@Example.COM ", time.Second)
	mk(Org, "bob@example.com", 2*time.Second)
	mk("org_other", "ann@example.com", 3*time.Second)
	test := ticketing.Tenant{OrganizerID: Org, Environment: ticketing.EnvTest}
	ids := func(os []*ticketing.Order) (out []string) {
		for _, o := range os {
			out = append(out, o.ID)
		}
		return out
	}
	got, err := f.st.Finder.OrdersByBuyer(f.ctx, test, "ANN@example.com", 10)
	if err != nil || !slices.Equal(ids(got), []string{b.ID, a.ID}) {
		t.Fatalf("ann's orders: %v, %v; want %s, %s (newest first, this organizer only)", ids(got), err, b.ID, a.ID)
	}
	if got, err = f.st.Finder.OrdersByBuyer(f.ctx, test, "ann@example.com", 1); err != nil || !slices.Equal(ids(got), []string{b.ID}) {
		t.Fatalf("limit 1: %v, %v", ids(got), err)
	}
	if got[0].Buyer.Email != b.Buyer.Email || got[0].Version == 0 {
		t.Fatalf("the order found is not the order stored: %+v", got[0])
	}
	live := ticketing.Tenant{OrganizerID: Org, Environment: ticketing.EnvLive}
	if got, err = f.st.Finder.OrdersByBuyer(f.ctx, live, "ann@example.com", 10); err != nil || len(got) != 0 {
		t.Fatalf("live mode has no order of ann: %v, %v", ids(got), err)
	}
	if got, err = f.st.Finder.OrdersByBuyer(f.ctx, test, "nobody@example.com", 10); err != nil || len(got) != 0 {
		t.Fatalf("an unknown buyer: %v, %v", ids(got), err)
	}

	f.pay(t, b)
	for _, n := range []string{b.TicketNumber, b.Tickets[0].Number} {
		if id, err := f.st.Finder.TicketOrder(f.ctx, ticketing.EnvTest, n); err != nil || id != b.ID {
			t.Fatalf("ticket %s: %q, %v; want %s", n, id, err, b.ID)
		}
		_, err := f.st.Finder.TicketOrder(f.ctx, ticketing.EnvLive, n)
		wantIs(t, "a test ticket in live mode", err, ticketing.ErrNotFound)
	}
	_, err = f.st.Finder.TicketOrder(f.ctx, ticketing.EnvTest, "TIX-NONE99")
	wantIs(t, "an unknown ticket", err, ticketing.ErrNotFound)
	if got, err = f.st.Finder.OrdersByBuyer(f.ctx, test, "ann@example.com", 10); err != nil || len(got) != 2 || got[0].Status != ticketing.OrderPaid {
		t.Fatalf("after payment the index shows the paid order: %v, %v", got, err)
	}
}
