package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/clock"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

const listOrg = "org_list"

// listedOrders writes n orders of listOrg in the test environment, 137 ms
// apart (several per second), cycling through the statuses and two events;
// every tenth is indexed as before sharding. Orders of the live environment
// and of another organizer are written too; none of them may be listed.
func listedOrders(t *testing.T, st *store.Store, base time.Time, n int) []*ticketing.Order {
	t.Helper()
	statuses := []ticketing.OrderStatus{ticketing.OrderPending, ticketing.OrderPaid, ticketing.OrderCancelled, ticketing.OrderRefunded}
	mk := func(i int, org string, env ticketing.Environment) *ticketing.Order {
		return &ticketing.Order{ID: fmt.Sprintf("ord_l%s%s%04d", org[4:], env, i), OrganizerID: org, Environment: env,
			Type: ticketing.OrderTypeTicket, Status: statuses[i%4], EventID: []string{"evt_la", "evt_lb"}[i%3%2],
			Lines:    []ticketing.OrderLine{{TierID: "tier_l", TierName: "GA", UnitPrice: 100, Quantity: 1}},
			Quantity: 1, Currency: "RUB", BasePrice: 100, TotalPrice: 100, Buyer: ticketing.Buyer{Email: "b@example.com"},
			CreatedAt: base.Add(time.Duration(i) * 137 * time.Millisecond), ExpiresAt: base.Add(time.Hour)}
	}
	var mine, all []*ticketing.Order
	for i := range n {
		o := mk(i, listOrg, ticketing.EnvTest)
		mine, all = append(mine, o), append(all, o)
	}
	for i := range 5 {
		all = append(all, mk(i, listOrg, ticketing.EnvLive), mk(i, "org_else", ticketing.EnvTest))
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(all))
	sem := make(chan struct{}, 8)
	for i, o := range all {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := st.PutOrderItem(context.Background(), o, i%10 == 0); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sort.Slice(mine, func(a, b int) bool {
		if !mine[a].CreatedAt.Equal(mine[b].CreatedAt) {
			return mine[a].CreatedAt.After(mine[b].CreatedAt)
		}
		return mine[a].ID > mine[b].ID
	})
	return mine
}

// walk follows the listing's cursors to the end and returns the ids and the
// page sizes.
func walk(t *testing.T, st *store.Store, q ticketing.OrderQuery) (ids []string, sizes []int) {
	t.Helper()
	for pages := 0; ; pages++ {
		if pages > 200 {
			t.Fatalf("%+v: more than 200 pages", q)
		}
		page, err := st.Orders.ListOrders(context.Background(), q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		for _, o := range page.Orders {
			ids = append(ids, o.ID)
		}
		sizes = append(sizes, len(page.Orders))
		if page.HasMore != (page.NextCursor != "") {
			t.Fatalf("has_more %v with cursor %q", page.HasMore, page.NextCursor)
		}
		if !page.HasMore {
			return ids, sizes
		}
		q.Cursor = page.NextCursor
	}
}

func orderIDs(os []*ticketing.Order, keep func(*ticketing.Order) bool) []string {
	var ids []string
	for _, o := range os {
		if keep(o) {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

// An organizer's orders are spread over the index shards; the listing merges
// them (and the unsharded partition of older orders) newest first, page by
// page, with and without filters, whatever the page size and list budget.
func TestListOrders_ShardedIndexMergesNewestFirst(t *testing.T) {
	base := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	clk := clock.NewFixed(base)
	st := testenv.Store(t, clk)
	ctx := context.Background()
	orders := listedOrders(t, st, base, 80)

	perPK := map[string]int{}
	for _, o := range orders {
		pk, err := st.OrderIndexPK(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		perPK[pk]++
	}
	if n := perPK["ORDERS#"+listOrg+"#test"]; n != 8 {
		t.Errorf("legacy partition holds %d orders, want 8", n)
	}
	busiest := 0
	for pk, n := range perPK {
		if !strings.HasPrefix(pk, "ORDERS#"+listOrg+"#test#") && pk != "ORDERS#"+listOrg+"#test" {
			t.Fatalf("order indexed under %q", pk)
		}
		if pk != "ORDERS#"+listOrg+"#test" {
			busiest = max(busiest, n)
		}
	}
	if len(perPK) < 21 || busiest > 8 {
		t.Fatalf("72 sharded orders over %d partitions, the busiest with %d: want at least 20 shards used, none above 8", len(perPK)-1, busiest)
	}

	q := ticketing.OrderQuery{OrganizerID: listOrg, Environment: ticketing.EnvTest, Now: base}
	all := orderIDs(orders, func(*ticketing.Order) bool { return true })
	for _, limit := range []int{3, 25, 100} {
		q.Limit = limit
		got, sizes := walk(t, st, q)
		if !slices.Equal(got, all) {
			t.Fatalf("limit %d: walked %d orders, want the %d newest first\n got %v\nwant %v", limit, len(got), len(all), got, all)
		}
		for i, n := range sizes[:len(sizes)-1] {
			if n != limit {
				t.Fatalf("limit %d: page %d has %d orders; pages without filters are full", limit, i+1, n)
			}
		}
	}

	after, before := base.Add(2*time.Second), base.Add(7*time.Second)
	for _, budget := range []int{0, 10} {
		st.SetListBudget(budget)
		for _, c := range []struct {
			name string
			q    ticketing.OrderQuery
			keep func(*ticketing.Order) bool
		}{
			{"paid", ticketing.OrderQuery{Status: ticketing.OrderPaid, Limit: 5},
				func(o *ticketing.Order) bool { return o.Status == ticketing.OrderPaid }},
			{"event in bounds", ticketing.OrderQuery{EventID: "evt_lb", CreatedAfter: &after, CreatedBefore: &before, Limit: 4},
				func(o *ticketing.Order) bool {
					s := o.CreatedAt.Truncate(time.Second)
					return o.EventID == "evt_lb" && !s.Before(after) && !s.After(before)
				}},
			{"bounds only", ticketing.OrderQuery{CreatedAfter: &after, CreatedBefore: &before, Limit: 6},
				func(o *ticketing.Order) bool {
					s := o.CreatedAt.Truncate(time.Second)
					return !s.Before(after) && !s.After(before)
				}},
		} {
			c.q.OrganizerID, c.q.Environment, c.q.Now = listOrg, ticketing.EnvTest, base
			got, _ := walk(t, st, c.q)
			if want := orderIDs(orders, c.keep); !slices.Equal(got, want) || len(want) == 0 {
				t.Fatalf("%s (budget %d): walked %v, want %v", c.name, budget, got, want)
			}
		}
	}
	st.SetListBudget(0)

	// A cursor is bound to its filters.
	q = ticketing.OrderQuery{OrganizerID: listOrg, Environment: ticketing.EnvTest, Now: base, Limit: 3}
	page, err := st.Orders.ListOrders(ctx, q)
	if err != nil || !page.HasMore {
		t.Fatalf("first page %+v, %v", page, err)
	}
	q.Cursor, q.Status = page.NextCursor, ticketing.OrderPaid
	var te *ticketing.Error
	if _, err := st.Orders.ListOrders(ctx, q); !errors.As(err, &te) || te.Code != ticketing.CodeInvalidRequest || te.Param != "cursor" {
		t.Fatalf("cursor reused with another status: %v, want invalid cursor", err)
	}

	// What one page costs: a Query per partition, rarely a second round.
	var mu sync.Mutex
	queries, units := 0, 0.0
	st.OnCapacity(func(op string, cc *types.ConsumedCapacity) {
		mu.Lock()
		defer mu.Unlock()
		if op == "ListOrders" {
			queries++
			if cc != nil && cc.CapacityUnits != nil {
				units += *cc.CapacityUnits
			}
		}
	})
	if _, err := st.Orders.ListOrders(ctx, ticketing.OrderQuery{OrganizerID: listOrg, Environment: ticketing.EnvTest, Now: base, Limit: 20}); err != nil {
		t.Fatal(err)
	}
	t.Logf("GET /orders?limit=20 over %d partitions (%d shards and the unsharded one): %d Queries, %.1f read units", store.OrderListShards+1, store.OrderListShards, queries, units)
	if queries > 2*(store.OrderListShards+1) {
		t.Fatalf("one page made %d Queries, want at most two rounds", queries)
	}
}
