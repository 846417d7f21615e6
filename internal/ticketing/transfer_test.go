package ticketing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

type transferDoor struct {
	*door
	trs  *ticketing.Transfers
	sent *ticketingtest.Offers
}

func newTransferDoor(t *testing.T) *transferDoor {
	d := newDoor(t)
	sent := &ticketingtest.Offers{}
	trs := &ticketing.Transfers{Store: d.st.Transfers(), Door: d.st.Tickets, Orders: d.sales.Orders, Offers: sent,
		AcceptURL: ticketingtest.AcceptURL}
	return &transferDoor{door: d, trs: trs, sent: sent}
}

func (d *transferDoor) create(number, to string) (*ticketing.Transfer, error) {
	return d.trs.Create(context.Background(), d.c, number, ticketing.TransferRequest{ToEmail: to})
}

// refused fails unless err is a ticketing error with code.
func refused(t *testing.T, what string, err error, code ticketing.Code) {
	t.Helper()
	if !ticketing.IsCode(err, code) {
		t.Fatalf("%s: %v, want %s", what, err, code)
	}
}

func TestTransfer_BadRequestsAreRefusedWithTheField(t *testing.T) {
	t.Parallel()
	d := newTransferDoor(t)
	o, _, _ := d.paid(t, "bad", 2)
	ctx := context.Background()
	long := strings.Repeat("a", 201)
	for _, c := range []struct {
		req   ticketing.TransferRequest
		param string
	}{
		{ticketing.TransferRequest{}, "to.email"},
		{ticketing.TransferRequest{ToEmail: "not an address"}, "to.email"},
		{ticketing.TransferRequest{ToEmail: "anna@[127.0.0.1]"}, "to.email"},
		{ticketing.TransferRequest{ToEmail: "anna@example.com", ToName: &long}, "to.name"},
	} {
		_, err := d.trs.Create(ctx, d.c, o.Tickets[0].Number, c.req)
		var e *ticketing.Error
		if !errors.As(err, &e) || e.Code != ticketing.CodeInvalidRequest || e.Param != c.param {
			t.Errorf("%+v: %v, want invalid_request on %s", c.req, err, c.param)
		}
	}
	_, err := d.create(o.TicketNumber, "anna@example.com")
	refused(t, "the order-level number", err, ticketing.CodeInvalidRequest)
	_, err = d.create("TIX-ZZZZZZ", "anna@example.com")
	refused(t, "an unknown ticket", err, ticketing.CodeNotFound)
	_, err = d.create("not-a-number", "anna@example.com")
	refused(t, "a malformed number", err, ticketing.CodeNotFound)
	other := d.c
	other.OrganizerID = "org_other"
	_, err = d.trs.Create(ctx, other, o.Tickets[0].Number, ticketing.TransferRequest{ToEmail: "anna@example.com"})
	refused(t, "another organizer's ticket", err, ticketing.CodeNotFound)
	d.trs.Offers = nil
	_, err = d.create(o.Tickets[0].Number, "anna@example.com")
	refused(t, "email off", err, ticketing.CodeUnsupported)
}

// The whole life of a transfer in memory: pending (one per ticket, the
// order's refund 409), a wrong secret not found, accepted once into a
// transferred-in order, the old ticket transferred at the door and in the
// tickets, the new one admitted, the refund rules.
func TestTransfer_AcceptReissuesTheTicketOnce(t *testing.T) {
	t.Parallel()
	d := newTransferDoor(t)
	ctx := context.Background()
	o, _, codes := d.paid(t, "life", 2)
	old := o.Tickets[0].Number
	tr, err := d.create(strings.ToLower(old), "Friend@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status != ticketing.TransferPending || tr.TicketNumber != old || tr.OrderID != o.ID || tr.TokenHash == "" ||
		strings.Contains(tr.TokenHash, d.sent.Token(t, tr.ID)) {
		t.Fatalf("transfer %+v", tr)
	}
	_, err = d.create(old, "other@example.com")
	refused(t, "a second transfer of the ticket", err, ticketing.CodeConflict)
	_, err = d.sales.Orders.RefundOrder(ctx, d.c.Tenant, o.ID, nil)
	refused(t, "refund with a transfer pending", err, ticketing.CodeConflict)
	_, _, err = d.trs.Accept(ctx, tr.ID, "a-guessed-secret")
	refused(t, "accept with a wrong secret", err, ticketing.CodeNotFound)
	_, _, _, err = d.trs.Offer(ctx, tr.ID, "")
	refused(t, "the page without a secret", err, ticketing.CodeNotFound)

	acc, n, err := d.trs.Accept(ctx, tr.ID, d.sent.Token(t, tr.ID))
	if err != nil {
		t.Fatal(err)
	}
	if acc.Status != ticketing.TransferAccepted || n.Status != ticketing.OrderPaid || n.Buyer.Email != "Friend@example.com" ||
		n.Payment.Provider != ticketing.PaymentTransferIn || n.TotalPrice != 0 || len(n.Tickets) != 1 || n.Tickets[0].Number == old ||
		n.EventID != o.EventID || n.Lines[0].TierID != o.Lines[0].TierID || acc.NewOrderID != n.ID {
		t.Fatalf("accepted %+v into order %+v", acc, n)
	}
	_, _, err = d.trs.Accept(ctx, tr.ID, d.sent.Token(t, tr.ID))
	refused(t, "the link used twice", err, ticketing.CodeConflict)
	_, err = d.trs.Cancel(ctx, d.c.Tenant, tr.ID)
	refused(t, "cancel of an accepted transfer", err, ticketing.CodeConflict)

	wantResult(t, d.scan(t, codes[old], "north"), ticketing.ResultTransferred)
	wantResult(t, d.scan(t, old, "north"), ticketing.ResultTransferred)
	tk, err := d.sales.Orders.Tickets(ctx, d.c.Tenant, o.ID)
	if err != nil || tk.Tickets[0].Status != ticketing.TicketTransferred || tk.Tickets[1].Status != ticketing.TicketIssued {
		t.Fatalf("the old order's tickets %+v %v", tk, err)
	}
	_, err = d.sales.Orders.RefundOrder(ctx, d.c.Tenant, n.ID, nil)
	refused(t, "refund of the transferred-in order", err, ticketing.CodeUnsupported)
	wantResult(t, d.scan(t, n.Tickets[0].Number, "north"), ticketing.ResultAdmitted)
	_, err = d.sales.Orders.RefundOrder(ctx, d.c.Tenant, o.ID, nil)
	refused(t, "refund after a transfer", err, ticketing.CodeConflict)
	_, err = d.create(old, "third@example.com")
	refused(t, "transfer of a transferred ticket", err, ticketing.CodeConflict)
	_, err = d.create(n.Tickets[0].Number, "third@example.com")
	refused(t, "transfer of a used ticket", err, ticketing.CodeConflict)
}

// A cancelled transfer frees the ticket: its link stops working, cancelling
// again answers it, and the order can then be refunded.
func TestTransfer_CancelFreesTheTicket(t *testing.T) {
	t.Parallel()
	d := newTransferDoor(t)
	ctx := context.Background()
	o, _, _ := d.paid(t, "cancel", 1)
	tr, err := d.create(o.Tickets[0].Number, "friend@example.com")
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.trs.Cancel(ctx, d.c.Tenant, tr.ID)
	if err != nil || c.Status != ticketing.TransferCancelled || c.CancelledAt == nil {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	if again, err := d.trs.Cancel(ctx, d.c.Tenant, tr.ID); err != nil || again.Status != ticketing.TransferCancelled {
		t.Fatalf("cancel again: %+v %v", again, err)
	}
	_, _, err = d.trs.Accept(ctx, tr.ID, d.sent.Token(t, tr.ID))
	refused(t, "accept after cancel", err, ticketing.CodeConflict)
	other := d.c.Tenant
	other.OrganizerID = "org_other"
	_, err = d.trs.Cancel(ctx, other, tr.ID)
	refused(t, "another organizer's cancel", err, ticketing.CodeNotFound)
	if _, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, o.ID, nil); err != nil {
		t.Fatalf("refund after the transfer was cancelled: %v", err)
	}
	_, err = d.create(o.Tickets[0].Number, "friend@example.com")
	refused(t, "transfer of a ticket being refunded", err, ticketing.CodeConflict)
}

// A used ticket cannot be transferred; a transfer whose email could not be
// written is undone, leaving the ticket free.
func TestTransfer_UsedTicketsAndUnsentOffers(t *testing.T) {
	t.Parallel()
	d := newTransferDoor(t)
	o, _, codes := d.paid(t, "used", 2)
	wantResult(t, d.scan(t, codes[o.Tickets[0].Number], "north"), ticketing.ResultAdmitted)
	_, err := d.create(o.Tickets[0].Number, "friend@example.com")
	refused(t, "transfer of a used ticket", err, ticketing.CodeConflict)
	d.sent.Fail = errors.New("the email jobs table is away")
	if _, err := d.create(o.Tickets[1].Number, "friend@example.com"); err == nil {
		t.Fatal("a transfer without its email was made")
	}
	d.sent.Fail = nil
	if _, err := d.create(o.Tickets[1].Number, "friend@example.com"); err != nil {
		t.Fatalf("the ticket is not free after the unsent offer: %v", err)
	}
}
