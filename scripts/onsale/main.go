// Command onsale models an on-sale of one event on DynamoDB's partition
// limits. It drives a short real on-sale on the local stack through the
// HTTP API (the real router and middleware on a loopback port): buyers, each
// from its own loopback address, read the event's availability with the
// storefront's pk_ key, hold a seat of a seated event, create an order of
// one general-admission tier and pay it (simulate-payment); the deliveries
// consumer issues the order.paid webhooks to a local receiver. Every DynamoDB request passes a metering
// proxy (capacity.go) that asks for its consumed capacity and adds it up by
// partition key. The model (model.go) scales each hot partition's units per
// order and per read to the chosen rates, prints them against the limits of
// one partition (1,000 WCU/s, 3,000 RCU/s) and the ceilings: the rates at
// which the first partition saturates. The last line is
//
//	ceiling: <N> orders/s, <M> availability reads/s
//
// and it exits 1 when N < 5,000 or M < 20,000 (`make onsale-model` starts
// the emulators).
//
//	go run ./scripts/onsale -orders 200 -reads 600 -holds 100 -order-rate 5000 -read-rate 20000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"tix/internal/auth"
	"tix/internal/store"
)

// The targets for one event and one tier.
const (
	TargetOrders = 5000
	TargetReads  = 20000
)

func main() {
	// 1,000: enough orders that each of the 128 order-list index shards takes
	// several (with fewer, the shards look like per-order keys and hide, and
	// the fullest shard of a small sample overstates its share).
	orders := flag.Int("orders", 1000, "orders created and paid in the measured on-sale")
	reads := flag.Int("reads", 600, "availability reads in the measured on-sale")
	holds := flag.Int("holds", 100, "seat holds (one seat each, on a seated event) in the measured on-sale")
	tierCap := flag.Int("tier-capacity", 20000, "capacity of the on-sale's tier (a hot on-sale's tier is large: its stock spreads over the most shards)")
	conc := flag.Int("concurrency", 16, "buyers at once")
	orderRate := flag.Float64("order-rate", TargetOrders, "orders/s of the modelled on-sale")
	readRate := flag.Float64("read-rate", TargetReads, "availability reads/s of the modelled on-sale")
	holdRate := flag.Float64("hold-rate", 0, "seat holds/s of the modelled on-sale (on another, seated event)")
	flag.Parse()
	counts := map[string]int{phaseOrder: *orders, phaseRead: *reads, phaseHold: *holds, "tier-capacity": *tierCap}
	rates := map[string]float64{phaseOrder: *orderRate, phaseRead: *readRate, phaseHold: *holdRate}
	n, m, err := run(counts, rates, *conc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "onsale:", err)
		os.Exit(2)
	}
	fmt.Printf("ceiling: %d orders/s, %d availability reads/s\n", n, m)
	if n < TargetOrders || m < TargetReads {
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(counts map[string]int, rates map[string]float64, conc int) (int, int, error) {
	orders, reads, holds, tierCapacity := counts[phaseOrder], counts[phaseRead], counts[phaseHold], counts["tier-capacity"]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	schema := Schema{PK: store.Table.PartitionKey, SK: store.Table.SortKey, Indexes: map[string]string{}}
	for _, ix := range store.Table.Indexes {
		schema.Indexes[ix.Name] = ix.PartitionKey
	}
	meter, proxyURL, closeProxy, err := NewMeter(envOr("TIX_DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"), schema)
	if err != nil {
		return 0, 0, err
	}
	defer closeProxy()
	s, err := newSale(ctx, proxyURL, max(tierCapacity, orders+10), holds)
	if err != nil {
		return 0, 0, err
	}
	defer s.close()

	fmt.Printf("==> Availability: %d reads of GET /v1/events/%s/availability (pk_ key), %d buyers at once\n", reads, eventID, conc)
	meter.Phase(phaseRead)
	if err := s.each(reads, conc, s.read); err != nil {
		return 0, 0, err
	}
	quiet(meter)
	fmt.Printf("==> Holds: %d seat holds of one seat each (POST /v1/seat-holds, pk_ key) on the seated event %s\n", holds, seatsID)
	meter.Phase(phaseHold)
	if err := s.each(holds, conc, s.hold); err != nil {
		return 0, 0, err
	}
	quiet(meter)
	fmt.Printf("==> Orders: %d orders of one ticket (pk_ key), each paid (simulate-payment) and its order.paid delivered, %d buyers at once\n", orders, conc)
	meter.Phase(phaseOrder)
	start := time.Now()
	if err := s.each(orders, conc, s.buy); err != nil {
		return 0, 0, err
	}
	if err := s.rc.waitFor(orders, time.Minute); err != nil {
		return 0, 0, err
	}
	quiet(meter)
	meter.Phase("")
	fmt.Printf("    %d orders paid and delivered in %.1fs\n", orders, time.Since(start).Seconds())

	var phases []Phase
	for _, p := range []struct {
		name string
		ops  int
	}{{phaseOrder, orders}, {phaseRead, reads}, {phaseHold, holds}} {
		usage, spans, calls := meter.Usage(p.name)
		printCalls(p.name, p.ops, calls, usage)
		phases = append(phases, Phase{Name: p.name, Ops: p.ops, Usage: usage, Spans: spans})
	}
	hot, spread := Split(phases)
	labels := map[string]string{auth.Hash(s.pk): "pk_", auth.Hash(s.sk): "sk_"}
	ceil := Report(os.Stdout, hot, spread, rates, []string{phaseOrder, phaseRead, phaseHold}, labels)
	return clamp(ceil[phaseOrder]), clamp(ceil[phaseRead]), nil
}

// The two operations of the model.
const (
	phaseOrder = "order"
	phaseRead  = "read"
	phaseHold  = "hold"
)

// quiet waits until no DynamoDB request has passed for half a second
// (the consumers' last writes of a phase).
func quiet(m *Meter) {
	last, since := m.Requests(), time.Now()
	for time.Since(since) < 500*time.Millisecond {
		time.Sleep(50 * time.Millisecond)
		if n := m.Requests(); n != last {
			last, since = n, time.Now()
		}
	}
}

func clamp(v float64) int {
	if v > 1e9 {
		return 1e9
	}
	return int(v)
}

// printCalls prints the requests and units per operation of a phase.
func printCalls(phase string, ops int, calls map[string]int, usage map[Partition]Units) {
	total, n := Units{}, 0
	for _, u := range usage {
		total.R += u.R
		total.W += u.W
	}
	for _, c := range calls {
		n += c
	}
	fmt.Printf("    per %s: %.2f DynamoDB requests, %.2f WCU, %.2f RCU (%v)\n", phase,
		float64(n)/float64(ops), total.W/float64(ops), total.R/float64(ops), calls)
}
