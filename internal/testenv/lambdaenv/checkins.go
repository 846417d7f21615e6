package lambdaenv

import (
	"context"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/ticketing"
)

// AddCheckIns pays a two-ticket test order of tier_l and admits its second
// ticket, and adds to Vars: ADMIT_TICKET_NUMBER, the first ticket (what
// checkins-check-in.json admits), and CHECK_IN_ID, the second's check-in
// (what checkins-undo.json undoes), and SCANNED_AT, a minute ago (the
// offline scan of checkins-batch.json).
func (e *Env) AddCheckIns(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	a := e.App
	app.EnableDoor(a) // as functions/checkins does
	tier, qty, email := "tier_l", 2, "door@example.com"
	res, err := a.Sales.Orders.CreateOrder(ctx, ticketing.Caller{Tenant: tenant, KeyID: e.keyID}, "fixture-door", ticketing.OrderRequest{
		Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
	})
	if err != nil {
		t.Fatalf("create the door's order: %v", err)
	}
	o, err := a.Sales.Orders.Simulate(ctx, tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil || len(o.Tickets) != 2 {
		t.Fatalf("pay the door's order: %v", err)
	}
	scan, err := a.CheckIns.Scan(ctx, tenant, ticketing.Scan{Code: o.Tickets[1].Number, Gate: "fixture", KeyID: e.keyID})
	if err != nil || scan.Result != ticketing.ResultAdmitted {
		t.Fatalf("admit the door's second ticket: %+v %v", scan, err)
	}
	e.Vars["ADMIT_TICKET_NUMBER"] = o.Tickets[0].Number
	e.Vars["CHECK_IN_ID"] = scan.CheckIn.ID
	e.Vars["SCANNED_AT"] = a.Sales.Deps.Clock.Now().UTC().Add(-time.Minute).Format(time.RFC3339) // checkins-batch.json's offline scan
}
