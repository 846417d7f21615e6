package ticketing_test

import (
	"context"
	"testing"

	"tix/internal/ticketing"
)

// A pending order cancelled by its caller: cancelled now with reason
// requested, its stock back, order.cancelled published, its version grown.
func TestCancelOrder_PendingGivesItsStockBack(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	o := d.order(t, "a", gaOrder(2))
	if n := d.gaSold(t); n != 2 {
		t.Fatalf("sold %d before the cancel", n)
	}
	got, err := d.sales.Orders.CancelOrder(ctx, d.c, o.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ticketing.OrderCancelled || got.CancelReason != ticketing.CancelRequested || got.CancelledAt == nil ||
		got.Webhook().Version != o.Webhook().Version+1 {
		t.Fatalf("cancelled order %+v (version %d, was %d)", got, got.Webhook().Version, o.Webhook().Version)
	}
	if n := d.gaSold(t); n != 0 {
		t.Fatalf("sold %d after the cancel, want 0", n)
	}
	if pub := d.publishedTypes(o.ID); len(pub) != 1 || pub[0] != ticketing.EventOrderCancelled {
		t.Fatalf("published %v", pub)
	}
	// Cancelled, it cannot be cancelled again; nor can it be paid.
	_, err = d.sales.Orders.CancelOrder(ctx, d.c, o.ID, "")
	wantCode(t, err, ticketing.CodeConflict, "")
	_, err = d.sales.Orders.Simulate(ctx, d.c.Tenant, o.ID, ticketing.OutcomePaid)
	wantCode(t, err, ticketing.CodeConflict, "")
}

// Only a pending order can be cancelled: paid, refunded and expired orders
// answer 409 and stay as they are; another organizer's order is not found.
func TestCancelOrder_OtherStatusesConflict(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	paid := d.order(t, "paid", gaOrder(1))
	if _, err := d.sales.Orders.Simulate(ctx, d.c.Tenant, paid.ID, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	expired := d.order(t, "expired", gaOrder(1))
	d.clk.Set(expired.ExpiresAt)
	for _, id := range []string{paid.ID, expired.ID} {
		before, _ := d.sales.Orders.Order(ctx, d.c.Tenant, id)
		_, err := d.sales.Orders.CancelOrder(ctx, d.c, id, "")
		wantCode(t, err, ticketing.CodeConflict, "")
		after, _ := d.sales.Orders.Order(ctx, d.c.Tenant, id)
		if after.Status != before.Status || after.Webhook().Version != before.Webhook().Version {
			t.Errorf("%s: %s v%d became %s v%d", id, before.Status, before.Webhook().Version, after.Status, after.Webhook().Version)
		}
	}
	other := d.c
	other.OrganizerID = "org_other"
	_, err := d.sales.Orders.CancelOrder(ctx, other, paid.ID, "")
	wantCode(t, err, ticketing.CodeNotFound, "")
}

// A publishable key (public: anyone may hold it) cancels only with the
// order's poll token; with it, the client's pending order stops counting
// against its cap, so the storefront can order again at once.
func TestCancelOrder_PublishableNeedsThePollTokenAndFreesTheClientCap(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	d.sales.Deps.Settings.OrderIPMaxUnits = 2
	d.sales.Deps.Settings.OrderIPMaxPending = 1
	pk := d.c
	pk.Publishable = true
	res, err := d.sales.Orders.CreateOrder(ctx, pk, "first", gaOrder(2))
	if err != nil {
		t.Fatal(err)
	}
	o := res.Order
	_, err = d.sales.Orders.CreateOrder(ctx, pk, "second", gaOrder(1))
	wantCode(t, err, ticketing.CodeRateLimited, "")

	other := d.order(t, "other", gaOrder(1))
	for _, token := range []string{"", "pt_wrong", d.sales.Deps.PollToken(other.ID)} {
		_, err := d.sales.Orders.CancelOrder(ctx, pk, o.ID, token)
		wantCode(t, err, ticketing.CodeUnauthorized, "")
	}
	if got, _ := d.sales.Orders.Order(ctx, d.c.Tenant, o.ID); got.Status != ticketing.OrderPending {
		t.Fatalf("refused cancels changed the order: %s", got.Status)
	}
	if _, err := d.sales.Orders.CancelOrder(ctx, pk, o.ID, d.sales.Deps.PollToken(o.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.sales.Orders.CreateOrder(ctx, pk, "second", gaOrder(2)); err != nil {
		t.Fatalf("after the cancel the client's cap still counts the order: %v", err)
	}
}
