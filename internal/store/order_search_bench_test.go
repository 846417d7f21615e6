package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// benchOrders is one organizer's test-mode order i of buyer i%buyers
// (two orders each), created one second apart, beside another organizer's.
func benchOrders(from, to, buyers int, t0 time.Time) []*ticketing.Order {
	var out []*ticketing.Order
	for i := from; i < to; i++ {
		org := "org_bench"
		if i%10 == 9 {
			org = "org_noise" // a tenth belong to another organizer
		}
		out = append(out, &ticketing.Order{ID: fmt.Sprintf("ord_bench%09d", i), OrganizerID: org, Environment: ticketing.EnvTest,
			Type: ticketing.OrderTypeTicket, Status: ticketing.OrderPaid, EventID: "evt_bench", EventTitle: "Bench",
			Lines:    []ticketing.OrderLine{{TierID: "tier_bench", TierName: "GA", UnitPrice: 150000, Quantity: 1}},
			Quantity: 1, Currency: "RUB", BasePrice: 150000, TotalPrice: 150000,
			Buyer: ticketing.Buyer{Email: "buyer" + strconv.Itoa(i%buyers) + "@example.com"}, KeyID: "key_bench",
			CreatedAt: t0.Add(time.Duration(i) * time.Second), ExpiresAt: t0.Add(time.Duration(i)*time.Second + 15*time.Minute)})
	}
	return out
}

// BenchmarkOrdersByBuyer writes BENCH_ORDERS orders (default 100,000; a
// tenth another organizer's) to a fresh table on DynamoDB Local, then
// finds a random buyer's orders BENCH_LOOKUPS times (default 500) with the
// one indexed Query and reports its median and p99; it fails when a lookup
// takes more than one request or the median is over 300 ms. Run it with
// `make bench-orders` (-benchtime 1x: the table is filled once).
func BenchmarkOrdersByBuyer(b *testing.B) {
	n, lookups := envInt("BENCH_ORDERS", 100_000), envInt("BENCH_LOOKUPS", 500)
	st := testenv.Store(b, nil)
	ctx := context.Background()
	start := time.Now()
	fillOrders(b, st, n)
	b.Logf("wrote %d orders in %s", n, time.Since(start).Round(time.Millisecond))
	requests := 0
	st.OnCapacity(func(op string, _ *types.ConsumedCapacity) { requests++ })
	tenant := ticketing.Tenant{OrganizerID: "org_bench", Environment: ticketing.EnvTest}
	buyers := n / 2
	b.ResetTimer()
	for range b.N {
		took := make([]time.Duration, 0, lookups)
		for range lookups {
			i := rand.IntN(buyers)
			if i%10 == 9 {
				i-- // org_bench's buyer
			}
			requests = 0
			t := time.Now()
			got, err := st.Search.OrdersByBuyer(ctx, tenant, "Buyer"+strconv.Itoa(i)+"@Example.com", 20)
			took = append(took, time.Since(t))
			if err != nil || len(got) == 0 || requests != 1 {
				b.Fatalf("buyer %d: %d orders, %d requests, %v; want its orders in one request", i, len(got), requests, err)
			}
		}
		slices.Sort(took)
		p50, p99 := took[len(took)/2], took[len(took)*99/100]
		b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
		b.Logf("%d lookups among %d orders: p50 %s, p99 %s, max %s", lookups, n, p50, p99, took[len(took)-1])
		if p50 > 300*time.Millisecond {
			b.Errorf("median lookup %s, over the 300 ms target", p50)
		}
	}
}

// fillOrders writes n bench orders with 8 writers.
func fillOrders(b *testing.B, st *store.Store, n int) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const writers, chunk = 8, 1000
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	next := make(chan int)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for from := range next {
				if err := st.PutOrderItems(context.Background(), benchOrders(from, min(from+chunk, n), n/2, t0), true); err != nil {
					select {
					case errs <- err:
					default: // one error each is enough; keep draining
					}
				}
			}
		}()
	}
	for from := 0; from < n; from += chunk {
		next <- from
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
