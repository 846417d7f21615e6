package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// payments strays lists the stray payments with a stable JSON shape, and
// says so when there are none.
func TestPaymentsStrays_ListsStrayPayments(t *testing.T) {
	c, st := newCLI(t)
	if code, out, _ := c.run("payments", "strays"); code != 0 || !strings.Contains(out, "No stray payments") {
		t.Fatalf("no strays: %d %q", code, out)
	}
	now := time.Now().UTC().Truncate(time.Second)
	at := now.Add(time.Minute)
	p := ticketing.StrayPayment{PaymentID: "7000000042", OrderID: "ord_cliStray1", OrganizerID: "org_cli", Environment: ticketing.EnvLive,
		Amount: 777, Status: ticketing.StrayRefundPending, DetectedAt: now, CheckAt: &at}
	if _, err := st.Payments.PutStray(context.Background(), &p); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Strays []map[string]any `json:"strays"`
	}
	c.json(0, &got, "payments", "strays")
	if len(got.Strays) != 1 {
		t.Fatalf("strays %v, want one", got.Strays)
	}
	s := got.Strays[0]
	var keys []string
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"amount", "detected_at", "environment", "next_check_at", "order_id", "organizer_id", "payment_id", "refunded_at", "status"}
	if !slices.Equal(keys, want) {
		t.Errorf("--json keys %v, want %v", keys, want)
	}
	if s["payment_id"] != "7000000042" || s["amount"] != float64(777) || s["status"] != "refund_pending" || s["refunded_at"] != nil {
		t.Errorf("stray %v", s)
	}
	if code, out, _ := c.run("payments", "strays"); code != 0 || !strings.Contains(out, "7000000042") || !strings.Contains(out, "ord_cliStray1") {
		t.Errorf("text: %d %q", code, out)
	}
}
