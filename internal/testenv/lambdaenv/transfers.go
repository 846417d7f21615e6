package lambdaenv

import (
	"context"
	"testing"

	"tix/internal/app"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// PublicURL is the API's public URL the orders function's test sets
// (TIX_PUBLIC_URL): transfers need it for their accept links.
const PublicURL = "https://abc123.execute-api.eu-central-1.amazonaws.com"

// AddTransfers pays a three-ticket test order of tier_l and offers each of
// its tickets, and adds to Vars: TRANSFERABLE_TICKET, the ticket of
// AddOrders' PAID_ORDER_ID (what orders-transfer-create.json offers; call
// AddOrders first), TRANSFER_ID and
// TRANSFER_TOKEN (a pending transfer and its link's secret: read, and its
// page shown), ACCEPT_TRANSFER_ID and ACCEPT_TOKEN (accepted by
// orders-transfer-accept.json), CANCEL_TRANSFER_ID (cancelled by
// orders-transfer-cancel.json).
func (e *Env) AddTransfers(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	a := e.App
	tier, qty, email := "tier_l", 3, "holder@example.com"
	res, err := a.Sales.Orders.CreateOrder(ctx, ticketing.Caller{Tenant: tenant, KeyID: e.keyID}, "fixture-transfers", ticketing.OrderRequest{
		Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
	})
	if err != nil {
		t.Fatalf("create the transfers' order: %v", err)
	}
	o, err := a.Sales.Orders.Simulate(ctx, tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil || len(o.Tickets) != 3 {
		t.Fatalf("pay the transfers' order: %v", err)
	}
	sent := &ticketingtest.Offers{}
	trs := &ticketing.Transfers{Store: a.Store.Transfers(), Door: a.Store.Tickets(), Orders: a.Sales.Orders, Offers: sent,
		AcceptURL: app.TransferAcceptURL(PublicURL)}
	offer := func(tk ticketing.Ticket) (string, string) {
		t.Helper()
		tr, err := trs.Create(ctx, ticketing.Caller{Tenant: tenant, KeyID: e.keyID}, tk.Number, ticketing.TransferRequest{ToEmail: "friend@example.com"})
		if err != nil {
			t.Fatalf("offer ticket %s: %v", tk.Number, err)
		}
		return tr.ID, sent.Token(t, tr.ID)
	}
	e.Vars["TRANSFER_ID"], e.Vars["TRANSFER_TOKEN"] = offer(o.Tickets[0])
	e.Vars["ACCEPT_TRANSFER_ID"], e.Vars["ACCEPT_TOKEN"] = offer(o.Tickets[1])
	e.Vars["CANCEL_TRANSFER_ID"], _ = offer(o.Tickets[2])
	free, err := a.Store.Orders.GetOrder(ctx, e.Vars["PAID_ORDER_ID"])
	if err != nil || len(free.Tickets) != 1 {
		t.Fatalf("the paid order's ticket (call AddOrders first): %v", err)
	}
	e.Vars["TRANSFERABLE_TICKET"] = free.Tickets[0].Number
}
