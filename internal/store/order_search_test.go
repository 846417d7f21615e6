package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// Finding a buyer's orders is one Query of the buyer index, whatever the
// number of the organizer's orders: no scan, no second read; the index
// keys carry no address.
func TestOrdersByBuyer_OneIndexedQuery(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t, nil)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := st.PutOrderItems(ctx, benchOrders(0, 200, 100, t0), true); err != nil {
		t.Fatal(err)
	}
	var ops []string
	st.OnCapacity(func(op string, _ *types.ConsumedCapacity) { ops = append(ops, op) })
	tenant := ticketing.Tenant{OrganizerID: "org_bench", Environment: ticketing.EnvTest}
	got, err := st.Search.OrdersByBuyer(ctx, tenant, " BUYER7@example.com", 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "ord_bench000000107" || got[1].ID != "ord_bench000000007" {
		t.Fatalf("buyer7's orders: %v, want ord_bench000000107 then ord_bench000000007", got)
	}
	if len(ops) != 1 || ops[0] != "OrdersByBuyer" {
		t.Fatalf("requests %v, want one OrdersByBuyer query", ops)
	}
	// buyer 9's orders are another organizer's (every tenth order).
	if got, err := st.Search.OrdersByBuyer(ctx, tenant, "buyer9@example.com", 20); err != nil || len(got) != 0 {
		t.Fatalf("another organizer's buyer: %v, %v", got, err)
	}
	if k := ticketing.BuyerKey("org_bench", ticketing.EnvTest, "buyer7@example.com"); strings.Contains(k, "buyer7") || strings.Contains(k, "@") {
		t.Fatalf("the buyer key %q carries the address", k)
	}
}

// Orders written without the buyer keys are not found by email until the
// backfill gives them their keys; a second run changes nothing.
func TestBackfillBuyerKeys(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t, nil)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := st.PutOrderItems(ctx, benchOrders(0, 30, 10, t0), false); err != nil {
		t.Fatal(err)
	}
	if err := st.PutOrderItems(ctx, benchOrders(30, 40, 10, t0), true); err != nil {
		t.Fatal(err)
	}
	tenant := ticketing.Tenant{OrganizerID: "org_bench", Environment: ticketing.EnvTest}
	if got, err := st.Search.OrdersByBuyer(ctx, tenant, "buyer3@example.com", 20); err != nil || len(got) != 1 {
		t.Fatalf("before the backfill only the keyed order is found: %v, %v", got, err)
	}
	// Two runs at once give each order its keys once between them.
	var n1, n2 int
	var err1, err2 error
	done := make(chan struct{})
	go func() { n2, err2 = st.Search.BackfillBuyerKeys(ctx); close(done) }()
	n1, err1 = st.Search.BackfillBuyerKeys(ctx)
	<-done
	if err1 != nil || err2 != nil || n1+n2 != 30 {
		t.Fatalf("two backfills at once: %d + %d (%v, %v); want 30 in all", n1, n2, err1, err2)
	}
	got, err := st.Search.OrdersByBuyer(ctx, tenant, "buyer3@example.com", 20)
	if err != nil || len(got) != 4 || got[0].ID != "ord_bench000000033" || got[3].ID != "ord_bench000000003" {
		t.Fatalf("after the backfill: %v, %v", got, err)
	}
	if n, err := st.Search.BackfillBuyerKeys(ctx); err != nil || n != 0 {
		t.Fatalf("a second backfill: %d, %v; want 0", n, err)
	}
}
