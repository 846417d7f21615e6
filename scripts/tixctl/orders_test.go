package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"tix/internal/ticketing"
)

func TestOrdersShow_LatePaymentAndRefund(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	o := &ticketing.Order{
		ID: "ord_cliShow1", OrganizerID: "org_cli", Environment: ticketing.EnvLive, Type: "ticket",
		Status: ticketing.OrderPending, EventID: "evt_cli", EventTitle: "Rock Night", Quantity: 2, Currency: "RUB",
		BasePrice: 300000, TotalPrice: 300000, Buyer: ticketing.Buyer{Email: "buyer@example.com"},
		Payment:   &ticketing.Payment{Provider: "sbp", ID: "7000000001", Payload: "https://qr.nspk.ru/x", ExpiresAt: now.Add(time.Minute)},
		CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(-45 * time.Minute),
	}
	if err := st.Orders.CreateOrder(ctx, o, &ticketing.Event{ID: "evt_cli"}, now); err != nil {
		t.Fatal(err)
	}

	var got map[string]any
	c.json(0, &got, "orders", "show", "ord_cliShow1")
	want := []string{"buyer_email", "cancel_reason", "cancelled_at", "created_at", "currency", "email", "environment", "event_id",
		"event_title", "expires_at", "id", "late_payment", "organizer_id", "outside_refund", "paid_at", "payment", "quantity", "refund",
		"status", "tickets", "total_price"}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Errorf("--json keys %v, want %v", keys, want)
	}
	if got["status"] != "pending" || got["environment"] != "live" || got["late_payment"] != nil || got["refund"] != nil ||
		got["total_price"] != float64(300000) || got["payment"].(map[string]any)["id"] != "7000000001" {
		t.Errorf("pending order: %v", got)
	}

	// Cancelled at expiry, then the money arrived: refunded automatically.
	cancelled, refunded := now.Add(-40*time.Minute), now.Add(-time.Minute)
	o.Status, o.CancelledAt, o.CancelReason = ticketing.OrderCancelled, &cancelled, "expired"
	cancelEvent := &ticketing.OrderEvent{ID: "evt_cliShowCancelled0000001", Type: ticketing.EventOrderCancelled,
		OrganizerID: o.OrganizerID, Environment: o.Environment, CreatedAt: now, Order: o.Webhook()}
	if err := st.Orders.CancelOrder(ctx, o, cancelEvent, now, false); err != nil {
		t.Fatal(err)
	}
	o.LatePayment = &ticketing.LatePayment{PaymentID: "7000000001", Outcome: ticketing.LateRefunded,
		DetectedAt: now.Add(-30 * time.Minute), CancelledAt: &cancelled, CancelReason: "expired", RefundedAt: &refunded}
	if err := st.Orders.SaveOrder(ctx, o, ticketing.OrderCancelled, nil, nil); err != nil {
		t.Fatal(err)
	}
	c.json(0, &got, "orders", "show", "ord_cliShow1")
	lp, _ := got["late_payment"].(map[string]any)
	if got["status"] != "cancelled" || got["cancel_reason"] != "expired" || lp["outcome"] != "refunded" ||
		lp["payment_id"] != "7000000001" || lp["refunded_at"] != refunded.Format(time.RFC3339) {
		t.Errorf("late payment refunded: %v", got)
	}
	code, out, _ := c.run("orders", "show", "ord_cliShow1")
	if code != 0 || !strings.Contains(out, "late payment: refunded of payment 7000000001") || !strings.Contains(out, "status:    cancelled") {
		t.Errorf("text: exit %d\n%s", code, out)
	}

	var e cliError
	c.json(1, &e, "orders", "show", "ord_nope")
	if e.Error.Code != "not_found" {
		t.Errorf("unknown order: %+v", e)
	}
	if code, _, _ := c.run("orders", "show"); code != 2 {
		t.Errorf("no order id: exit %d, want 2", code)
	}
}
