// Command onsale models an on-sale of one event on DynamoDB's partition
// limits. It drives a short real on-sale on the local stack through the
// HTTP API (the real router and middleware on a loopback port): buyers, each
// from its own loopback address, read the event's availability with the
// storefront's pk_ key, hold the best available seats of a seated event
// (its seats in blocks), create an order of
// one general-admission tier and pay it (simulate-payment); the deliveries
// consumer issues the order.paid webhooks to a local receiver. Every DynamoDB request passes a metering
// proxy (capacity.go) that asks for its consumed capacity and adds it up by
// partition key. The model (model.go) scales each hot partition's units per
// order and per read to the chosen rates, prints them against the limits of
// one partition (1,000 WCU/s, 3,000 RCU/s) and the ceilings: the rates at
// which the first partition saturates. The last line is
//
//	ceiling: <N> orders/s, <M> availability reads/s, <S> seat holds/s, <Q> queue joins/s, bound by ...
//
// and it exits 1 when N < 5,000, M < 20,000, S < 5,000 or Q < 20,000 (`make
// onsale-model` starts the emulators). A queue join is one visitor of the
// waiting room: challenge, join and one status read (queue.go).
//
//	go run ./scripts/onsale -orders 200 -reads 600 -holds 100 -order-rate 5000 -read-rate 20000
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"tix/internal/api"
	"tix/internal/auth"
	"tix/internal/store"
	"tix/internal/ticketing"
	"tix/scripts/loadstack"
)

// holdQuantity is how many seats each best-available hold asks for.
var holdQuantity = 2

// The targets for one event and one tier.
const (
	TargetOrders = 5000
	TargetReads  = 20000
	TargetJoins  = 20000
)

func main() {
	// 1,000: enough orders that each of the 128 order-list index shards takes
	// several (with fewer, the shards look like per-order keys and hide, and
	// the fullest shard of a small sample overstates its share).
	orders := flag.Int("orders", 1000, "orders created and paid in the measured on-sale")
	reads := flag.Int("reads", 600, "availability reads in the measured on-sale")
	holds := flag.Int("holds", 400, "best-available seat holds (of -hold-quantity seats, on a seated event) in the measured on-sale")
	flag.IntVar(&holdQuantity, "hold-quantity", 2, "seats per best-available hold")
	joins := flag.Int("joins", 1000, "visitors of the waiting room (challenge, join, one status read) in the measured on-sale")
	tierCap := flag.Int("tier-capacity", 20000, "capacity of the on-sale's tier (a hot on-sale's tier is large: its stock spreads over the most shards)")
	conc := flag.Int("concurrency", 16, "buyers at once")
	orderRate := flag.Float64("order-rate", TargetOrders, "orders/s of the modelled on-sale")
	readRate := flag.Float64("read-rate", TargetReads, "availability reads/s of the modelled on-sale")
	holdRate := flag.Float64("hold-rate", TargetHolds, "best-available seat holds/s of the modelled on-sale (on another, seated event)")
	joinRate := flag.Float64("join-rate", TargetJoins, "queue joins/s of the modelled on-sale's waiting room")
	sr := SeatReads{Blocks: ticketing.SeatBlocks}
	flag.IntVar(&sr.VenueSeats, "venue-seats", 50000, "seats of the seated occurrence (the reads of best available: all taken)")
	flag.Float64Var(&sr.ItemBytes, "seat-item-bytes", 150, "bytes of a taken seat's item")
	flag.Float64Var(&sr.EventBytes, "event-item-bytes", 4096, "bytes of the seated event's item (without its map)")
	flag.Float64Var(&sr.HoldLatency, "hold-latency", 0.05, "seconds a best-available hold takes")
	var tr Traffic
	flag.Float64Var(&tr.Polls, "polls", 5, "status polls (GET /orders/{id}) per order in production")
	flag.Float64Var(&tr.LiveShare, "live-share", 1, "share of orders paid live (POST /orders waits for the bank, then stores the payment)")
	flag.Float64Var(&tr.BankLatency, "bank-latency", 0.5, "seconds the bank takes to create a payment (0.3-1 s)")
	flag.Float64Var(&tr.OrderLatency, "order-latency", 0.1, "seconds of POST /orders besides the bank")
	flag.Float64Var(&tr.ReadLatency, "read-latency", 0.03, "seconds of an availability read")
	flag.Float64Var(&tr.Minutes, "rush-minutes", 10, "minutes the rush lasts (the webhook backlog)")
	flag.Float64Var(&tr.DeliverMessages, "deliver-messages", 2, "messages an order puts on the deliveries queue (its webhook, its tickets' email job)")
	flag.Float64Var(&tr.DeliverLatency, "deliver-latency", 0.2, "seconds the deliver function takes for one message (a webhook POST, an email's render and send)")
	flag.Parse()
	counts := map[string]int{phaseOrder: *orders, phaseRead: *reads, phaseHold: *holds, phaseJoin: *joins, "tier-capacity": *tierCap}
	rates := map[string]float64{phaseOrder: *orderRate, phaseRead: *readRate, phaseHold: *holdRate, phaseJoin: *joinRate}
	res, err := run(counts, rates, *conc, tr, sr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "onsale:", err)
		os.Exit(2)
	}
	fmt.Printf("ceiling: %d orders/s, %d availability reads/s, %d seat holds/s, %d queue joins/s, bound by %s; under the old rules %d orders/s, %d availability reads/s\n",
		res.orders, res.reads, res.holds, res.joins, res.binding, res.oldOrders, res.oldReads)
	if res.orders < TargetOrders || res.reads < TargetReads || res.holds < TargetHolds || res.joins < TargetJoins {
		os.Exit(1)
	}
}

// result is the model's ceilings under the honest rules, what binds the
// orders first, and the ceilings of the same run under the old rules (one
// partition's limits only, transactions billed as DynamoDB Local reports
// them, each shard's own sampled load).
type result struct {
	orders, reads, holds, joins, oldOrders, oldReads int
	binding                                          string
}

func run(counts map[string]int, rates map[string]float64, conc int, tr Traffic, sr SeatReads) (*result, error) {
	orders, reads, holds, tierCapacity := counts[phaseOrder], counts[phaseRead], counts[phaseHold], counts["tier-capacity"]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	schema := Schema{PK: store.Table.PartitionKey, SK: store.Table.SortKey, Indexes: map[string]string{}}
	for _, ix := range store.Table.Indexes {
		schema.Indexes[ix.Name] = ix.PartitionKey
	}
	meter, proxyURL, closeProxy, err := NewMeter(loadstack.EnvOr("TIX_DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"), schema)
	if err != nil {
		return nil, err
	}
	defer closeProxy()
	s, err := newSale(ctx, proxyURL, max(tierCapacity, orders+10), 2*holds*holdQuantity, rates)
	if err != nil {
		return nil, err
	}
	defer s.close()

	fmt.Printf("==> Availability: %d reads of GET /v1/events/%s/availability (pk_ key), %d buyers at once\n", reads, eventID, conc)
	meter.Phase(phaseRead)
	if err := s.each(reads, conc, s.read); err != nil {
		return nil, err
	}
	quiet(meter)
	fmt.Printf("==> Holds: %d best-available holds of %d seats (POST /v1/seat-holds, pk_ key) on the seated event %s (%d seat blocks)\n",
		holds, holdQuantity, seatsID, ticketing.SeatBlocks)
	meter.Phase(phaseHold)
	if err := s.each(holds, conc, s.hold); err != nil {
		return nil, err
	}
	quiet(meter)
	fmt.Printf("==> Waiting room: %d visitors of %s (pk_ key): challenge, proof of work, join, one status read\n", counts[phaseJoin], queueID)
	meter.Phase(phaseJoin)
	if err := s.each(counts[phaseJoin], conc, s.join); err != nil {
		return nil, err
	}
	quiet(meter)
	fmt.Printf("==> Orders: %d orders of one ticket (pk_ key), each paid (simulate-payment) and its order.paid delivered, %d buyers at once\n", orders, conc)
	meter.Phase(phaseOrder)
	start := time.Now()
	if err := s.each(orders, conc, s.buy); err != nil {
		return nil, err
	}
	if err := s.rc.waitFor(orders, time.Minute); err != nil {
		return nil, err
	}
	quiet(meter)
	meter.Phase("")
	fmt.Printf("    %d orders paid and delivered in %.1fs\n", orders, time.Since(start).Seconds())

	labels := map[string]string{auth.Hash(s.pk): "pk_", auth.Hash(s.sk): "sk_"}
	return model(meter, map[string]int{phaseOrder: orders, phaseRead: reads, phaseHold: holds, phaseJoin: counts[phaseJoin]}, rates, labels, tr, sr), nil
}

// model prints the old rules' ceilings, then the honest ones: partitions at
// their shape's mean load, transactions per item, the whole system.
func model(meter *Meter, ops map[string]int, rates map[string]float64, labels map[string]string, tr Traffic, sr SeatReads) *result {
	names := []string{phaseOrder, phaseRead, phaseHold, phaseJoin}
	var phases, old []Phase
	totals := map[string]Totals{}
	for _, name := range names {
		usage, spans, calls := meter.Usage(name)
		printCalls(name, ops[name], calls, usage)
		phases = append(phases, Phase{Name: name, Ops: ops[name], Usage: usage, Spans: spans})
		old = append(old, Phase{Name: name, Ops: ops[name], Usage: meter.LocalUsage(name), Spans: spans})
		totals[name] = TotalsOf(usage, max(ops[name], 1))
	}
	fmt.Println("==> The old rules: one partition's limits, transactions billed as DynamoDB Local reports them, each shard's sampled load")
	oldHot, oldSpread := Split(old)
	oldCeil := Report(io.Discard, oldHot, oldSpread, rates, names, labels)
	_, oldAt := Ceiling(oldHot, phaseOrder)
	_, oldReadAt := Ceiling(oldHot, phaseRead)
	fmt.Printf("    ceiling: %s orders/s (first full: %s), %s availability reads/s (first full: %s)\n",
		rate(oldCeil[phaseOrder]), partitionOf(oldAt), rate(oldCeil[phaseRead]), partitionOf(oldReadAt))
	fmt.Println("==> The honest rules: transactions billed per item, each shard at its shape's mean load, transactions per item, the whole system")
	hot, spread := Split(phases)
	hot = MeanShards(hot)
	ceil := Report(os.Stdout, hot, spread, rates, names, labels)
	res := &result{reads: clamp(ceil[phaseRead]), joins: clamp(ceil[phaseJoin]), oldOrders: clamp(oldCeil[phaseOrder]), oldReads: clamp(oldCeil[phaseRead])}
	res.holds = clamp(min(ceil[phaseHold], sr.Ceiling(os.Stdout)))
	_, at := Ceiling(hot, phaseOrder)
	res.orders, res.binding = clamp(ceil[phaseOrder]), "partition "+partitionOf(at)+" (1,000 WCU/s, 3,000 RCU/s)"
	for _, ph := range []string{phaseOrder, phaseHold} {
		cs := ItemContention(meter.TxItems(ph), max(ops[ph], 1))
		fmt.Printf("==> Items in many %ss' transactions (healthy at %.0f transactions/s each)\n", ph, HealthyItemRate)
		for i, c := range cs {
			if i == 6 {
				break
			}
			fmt.Printf("    %-60s %4d items, %.4f transactions a %s on each: %5.0f/s at %.0f %ss/s, healthy up to %s %ss/s\n",
				trim(c.Shape, 60), c.Items, c.PerItem, ph, c.PerItem*rates[ph], rates[ph], ph, rate(c.Ceiling()), ph)
		}
		for _, c := range ClientCounters(meter.TxItems(ph), max(ops[ph], 1)) {
			fmt.Printf("    %-60s one client's item, %.2f transactions a %s: %3.0f/s for a client at its most (%d orders and holds/s, whatever its budget)%s\n",
				trim(c.Shape, 60), c.PerOp, ph, c.Rate(), api.MaxClientWritesPerSecond, conflicts(c.Rate() > HealthyItemRate))
		}
		if ph == phaseOrder && len(cs) > 0 && clamp(cs[0].Ceiling()) < res.orders {
			res.orders, res.binding = clamp(cs[0].Ceiling()), "transactions on item "+cs[0].Shape
		}
		if ph == phaseHold && len(cs) > 0 {
			res.holds = min(res.holds, clamp(cs[0].Ceiling()))
		}
	}
	PrintNeeds(os.Stdout, System(os.Stdout, totals, rates, hot, tr))
	return res
}

// conflicts flags an item above the healthy transaction rate.
func conflicts(b bool) string { return flagIf(b, "  OVER (transaction conflicts)") }

// partitionOf names a load's partition ("none" for no load).
func partitionOf(l *Load) string {
	if l == nil {
		return "none"
	}
	return l.Partition.String()
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
