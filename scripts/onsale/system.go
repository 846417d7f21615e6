package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"

	"tix/internal/api"
)

// The honest rules count what AWS does beyond one partition's limits
// (docs/measurements.md, The on-sale model; the sources are cited there).
const (
	// HealthyItemRate is the transactions a second one item can be in and
	// stay mostly free of TransactionConflict: an item is held from prepare
	// to commit (about 5-15 ms), so one item commits on the order of 100
	// transactions a second; at 50 it is busy about half the time.
	HealthyItemRate = 50.0
	// TableQuota is the table-level read and write throughput quota of an
	// on-demand table (each index has the same), AWS's default.
	TableQuota = 40000
	// WarmReads and WarmWrites are what a new on-demand table (or index)
	// serves at once, without DynamoDB first splitting partitions.
	WarmReads, WarmWrites = 12000, 4000
	// LambdaQuota is the account's concurrent executions by default;
	// LambdaScaleStep instances more per function every 10 seconds.
	LambdaQuota, LambdaScaleStep = 1000, 1000
	// APIRate and APIBurst are API Gateway's account throttle per Region.
	APIRate, APIBurst = 10000, 5000
	// WebhookDomainRate and WebhookGlobalRate are the outbound webhook
	// limits' defaults (TIX_WEBHOOK_DOMAIN_RATE, TIX_WEBHOOK_GLOBAL_RATE).
	WebhookDomainRate, WebhookGlobalRate = 25, 500
	// ShardHintSeconds is how long a process trusts the stock shard levels
	// it read (store.shardHintTTL).
	ShardHintSeconds = 2.0
)

// Traffic is what a real order does beyond the measured run's calls, and
// how long its calls take: production assumptions the model states.
type Traffic struct {
	Polls        float64 // GET /orders/{id} status polls per order (1 strongly consistent read of a ~2 KB item each)
	LiveShare    float64 // share of orders paid live: their POST /orders waits for the bank and stores the payment (a second write, ~2 WCU)
	BankLatency  float64 // seconds the bank takes to create a payment
	OrderLatency float64 // seconds of POST /orders besides the bank
	ReadLatency  float64 // seconds of an availability read
	Minutes      float64 // length of the rush, for the webhook backlog
	// DeliverMessages and DeliverLatency: messages an order puts on the
	// deliveries queue (its webhook, its tickets' email job) and the
	// seconds the deliver function takes for one (a POST, a render and send).
	DeliverMessages, DeliverLatency float64
}

// DeliverInFlight is what the deliver function's queue mapping takes at
// once: infra's DeliverMaxConcurrency (20) invocations of BatchSize (10)
// messages, each batch's handled concurrently. Every webhook and email job
// of the stage shares it.
const DeliverInFlight = 20 * DeliverBatch

// DeliverBatch is infra's BatchSize: messages an invocation of deliver takes.
const DeliverBatch = 10

// Deliveries prints the deliver function at ro orders/s: the messages they
// put on the deliveries queue against what DeliverInFlight at
// tr.DeliverLatency each passes, and how late a rush's last one leaves;
// it returns that lag in seconds.
func Deliveries(w io.Writer, ro float64, tr Traffic) float64 {
	passes, need := DeliverInFlight/tr.DeliverLatency, ro*tr.DeliverMessages
	lag := 0.0
	if need > passes {
		lag = tr.Minutes * 60 * (need - passes) / passes
	}
	fmt.Fprintf(w, "==> Deliveries: %.0f messages/s (%.0f an order: its webhook, its email job) at %.2fs each; the deliver function takes %d at once (infra DeliverMaxConcurrency x BatchSize), %.0f/s: a %.0f-minute rush's last one %.0f minutes late%s\n",
		need, tr.DeliverMessages, tr.DeliverLatency, DeliverInFlight, passes, tr.Minutes, lag/60, flagIf(need > passes, "  OVER (the deliver mapping's cap binds before the webhook limits: -c deliverConcurrency, below)"))
	return lag
}

// flagIf is s when b, else nothing.
func flagIf(b bool, s string) string {
	if b {
		return s
	}
	return ""
}

// Contention is an item shape that many operations' transactions share:
// Items of them, PerItem transactions per operation on each (mean).
type Contention struct {
	Shape   string
	Items   int
	PerItem float64
}

// Ceiling is the rate at which each item of the shape is in HealthyItemRate
// transactions a second.
func (c Contention) Ceiling() float64 { return HealthyItemRate / c.PerItem }

var (
	itemNumber = regexp.MustCompile(`\d+`)
	itemIP     = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}\b`)
	itemWindow = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`) // a tally's quarter
)

// ItemContention groups the items that transactions touched (tx: "PK SK" ->
// transactions) by shape and gives the mean transactions per operation and
// item of the shapes many operations share, most contended first. A shape
// is shared when its items differ only by numbers (the shards of a counter,
// of a tally, a time window) or it has one item (a promo code); items that
// differ by an id are an operation's own (an order, its key's record, its
// timer), and per-client counters (an IP in the key) are one client's
// (ClientCounters). The items of a time window (a tally's quarter) are
// counted once per window: a run across a quarter's end touches each shard
// in two quarters, one after the other.
func ItemContention(tx map[string]int, ops int) []Contention {
	type agg struct {
		items, total int
		names        map[string]bool // the keys with their numbers masked
		windows      map[string]bool
	}
	shapes := map[string]*agg{}
	for k, n := range tx {
		s := Shape(Partition{Key: k})
		a := shapes[s]
		if a == nil {
			a = &agg{names: map[string]bool{}, windows: map[string]bool{}}
			shapes[s] = a
		}
		a.windows[itemWindow.FindString(k)] = true
		a.items++
		a.total += n
		a.names[itemNumber.ReplaceAllString(itemIP.ReplaceAllString(k, "{ip}"), "{n}")] = true
	}
	for s, a := range shapes {
		// A counter's shard 0 is its unsharded key (STK#<event>#<env> beside
		// STK#<event>#<env>#<n>): one of the shards.
		pk, sk, _ := strings.Cut(s, " ")
		if b := shapes[pk+"#{n} "+sk]; a.items == 1 && b != nil && len(b.names) == 1 {
			b.items++
			b.total += a.total
			delete(shapes, s)
		}
	}
	var out []Contention
	for s, a := range shapes {
		if len(a.names) > 1 || strings.Contains(s, "{ip}") {
			continue
		}
		items := float64(a.items) / float64(len(a.windows)) // at once
		out = append(out, Contention{Shape: s, Items: int(math.Round(items)), PerItem: float64(a.total) / items / float64(ops)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PerItem > out[j].PerItem })
	return out
}

// ClientCounter is what a client's own counter (one item per client and
// event: its pending orders and held seats) takes: PerOp transactions an
// operation of that client. Its fullest rate is a client at
// api.MaxClientWritesPerSecond, the most order and hold creations a second
// one client network gets whatever its key's budget.
type ClientCounter struct {
	Shape string
	PerOp float64
}

// Rate is the transactions a second on one client's counter at the most
// creations a second a client gets.
func (c ClientCounter) Rate() float64 { return c.PerOp * api.MaxClientWritesPerSecond }

// ClientCounters are the per-client counters (an IP in the key, and no
// request's hash) among the items transactions touched (tx: "PK SK" -> transactions), each shape with
// its transactions per operation of one client (ops operations, each from
// a client of its own), most first.
func ClientCounters(tx map[string]int, ops int) []ClientCounter {
	total := map[string]int{}
	for k, n := range tx {
		if itemIP.MatchString(k) && !strings.Contains(Shape(Partition{Key: k}), "{hash}") { // not a request's own (an idempotency key's)
			total[Shape(Partition{Key: k})] += n
		}
	}
	var out []ClientCounter
	for s, n := range total {
		out = append(out, ClientCounter{Shape: s, PerOp: float64(n) / float64(ops)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PerOp > out[j].PerOp })
	return out
}

// MeanShards gives each partition of a shape with several keys (the shards
// of a counter, of an index, of a windowed counter) the shape's mean load: a random or
// hashed choice spreads the load evenly at the rate, and the fullest shard
// of a short run is sampling noise, not a limit.
func MeanShards(hot []Load) []Load {
	groups := map[string][]int{} // the shards of a windowed counter are rolling groups of one shape
	for i, l := range hot {
		s := Shape(l.Partition)
		groups[s] = append(groups[s], i)
	}
	out := make([]Load, len(hot))
	copy(out, hot)
	for _, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		mean := map[string]Units{}
		for _, i := range idx {
			for ph, u := range hot[i].PerOp {
				x := mean[ph]
				mean[ph] = Units{R: x.R + u.R/float64(len(idx)), W: x.W + u.W/float64(len(idx))}
			}
		}
		for _, i := range idx {
			out[i] = Load{Partition: hot[i].Partition, PerOp: mean}
		}
	}
	return out
}

// Totals are the units per operation of the table ("table") and of each index.
type Totals map[string]Units

// TotalsOf adds up a phase's usage by table and index, per operation.
func TotalsOf(usage map[Partition]Units, ops int) Totals {
	t := Totals{}
	for p, u := range usage {
		name := p.Index
		if name == "" {
			name = "table"
		}
		x := t[name]
		t[name] = Units{R: x.R + u.R/float64(ops), W: x.W + u.W/float64(ops)}
	}
	return t
}

// Needs are the quotas and on-sale context a rate requires.
type Needs struct {
	TableReads, TableWrites, IndexReads, IndexWrites float64
	Orders, Catalog                                  float64 // Lambda instances of the two functions
	// Deliver is the deliver function's invocations at once (its queue
	// mapping's cap, infra's deliverConcurrency context).
	Deliver     float64
	APIRate     float64
	WebhookRate float64
	// KeyReads and KeyWrites are the requests a second through the
	// storefront's publishable key: availability reads; orders and holds.
	KeyReads, KeyWrites float64
}

// The production budgets of one publishable key, all its clients together
// (TIX_RATE_PK_READS, TIX_RATE_PK_WRITES a minute): the first limits an
// on-sale through one storefront key meets.
const (
	PKReadsDefault  = 60000
	PKWritesDefault = 6000
)

// KeyBudget is the per-minute budget that admits rate requests a second
// with 20% headroom, in thousands.
func KeyBudget(rate float64) int { return int(math.Ceil(rate*60*1.2/1000) * 1000) }

// System prints the table and index totals at rates against the quotas and
// warm throughput, the odds that hot keys share a partition, Lambda and
// API Gateway at the rate, the webhook backlog and the sell-out; it
// returns what the rate needs.
func System(w io.Writer, totals map[string]Totals, rates map[string]float64, hot []Load, tr Traffic) Needs {
	ro, rr := rates[phaseOrder], rates[phaseRead]
	at := Totals{}
	for ph, t := range totals {
		for name, u := range t {
			x := at[name]
			at[name] = Units{R: x.R + u.R*rates[ph], W: x.W + u.W*rates[ph]}
		}
	}
	tb := at["table"]
	tb.R += ro * tr.Polls         // status polls: 1 RCU each
	tb.W += ro * tr.LiveShare * 2 // the live payment stored on the order
	at["table"] = tb
	var n Needs
	fmt.Fprintf(w, "==> The whole table at %.0f orders/s, %.0f reads/s (plus %.0f status polls an order, %.0f%% of orders paid live)\n", ro, rr, tr.Polls, 100*tr.LiveShare)
	names := make([]string, 0, len(at))
	for k := range at {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		u := at[name]
		fmt.Fprintf(w, "    %-8s %9.0f WCU/s %9.0f RCU/s   quota %d each, new on-demand warm %d WCU/s %d RCU/s%s\n",
			name, u.W, u.R, TableQuota, WarmWrites, WarmReads, over(u.W > TableQuota || u.R > TableQuota))
		if name == "table" {
			n.TableReads, n.TableWrites = u.R, u.W
		} else {
			n.IndexReads, n.IndexWrites = math.Max(n.IndexReads, u.R), math.Max(n.IndexWrites, u.W)
		}
	}
	partitions := math.Max(math.Ceil(n.TableWrites/PartitionWCU), math.Ceil(n.TableReads/PartitionRCU))
	warm := 0 // keys over half a partition's limits: two of them together pass it
	for _, l := range hot {
		u := l.At(rates)
		if math.Max(u.W/PartitionWCU, u.R/PartitionRCU) > 0.5 {
			warm++
		}
	}
	pairs := float64(warm*(warm-1)) / 2
	fmt.Fprintf(w, "==> Hot keys sharing a partition: %d keys above half a partition's limits; warmed to the rate the table has at least %.0f partitions:\n", warm, partitions)
	fmt.Fprintf(w, "    %.0f%% odds that two of them hash to one partition, which throttles at their sum until DynamoDB splits it for heat\n",
		100*(1-math.Exp(-pairs/math.Max(partitions, 1))))
	n.Orders = ro * (tr.OrderLatency + tr.LiveShare*tr.BankLatency)
	n.Catalog = rr * tr.ReadLatency
	n.APIRate = ro*(2+tr.Polls) + rr + rates[phaseHold]
	fmt.Fprintf(w, "==> Lambda (Little's law): orders %.0f instances (%.2fs a call, %.1fs of it waiting for the bank on %.0f%% of orders), catalog %.0f; account quota %d,\n",
		n.Orders, tr.OrderLatency+tr.LiveShare*tr.BankLatency, tr.BankLatency, 100*tr.LiveShare, n.Catalog, LambdaQuota)
	fmt.Fprintf(w, "    scaling %d instances per function every 10 s: from cold, orders reach %.0f in %.0f s unless provisioned ahead\n",
		LambdaScaleStep, n.Orders, 10*math.Ceil(n.Orders/LambdaScaleStep))
	fmt.Fprintf(w, "==> API Gateway: %.0f requests/s (each order: POST /orders, its payment notification, %.0f polls); account throttle %d/s, burst %d%s\n",
		n.APIRate, tr.Polls, APIRate, APIBurst, over(n.APIRate > APIRate))
	n.WebhookRate = ro
	n.KeyReads, n.KeyWrites = rr, ro+rates[phaseHold]
	fmt.Fprintf(w, "==> Budgets: at the defaults a publishable key admits %d reads/s (TIX_RATE_PK_READS %d a minute) and %d orders and holds/s (TIX_RATE_PK_WRITES %d)%s;\n",
		PKReadsDefault/60, PKReadsDefault, PKWritesDefault/60, PKWritesDefault, budgetOver(rr > PKReadsDefault/60 || n.KeyWrites > PKWritesDefault/60))
	fmt.Fprintf(w, "    this run counted under the budgets the rate needs: TIX_RATE_PK_READS %d, TIX_RATE_PK_WRITES %d\n", KeyBudget(rr), KeyBudget(n.KeyWrites))
	lag := 0.0
	if ro > WebhookDomainRate {
		lag = tr.Minutes * 60 * (ro - WebhookDomainRate) / WebhookDomainRate
	}
	fmt.Fprintf(w, "==> Webhooks: %.0f order.paid/s to the organizer's endpoint; at the default %d/s per host (%d/s in all) a %.0f-minute rush leaves the last one %.0f minutes late\n",
		ro, WebhookDomainRate, WebhookGlobalRate, tr.Minutes, lag/60)
	Deliveries(w, ro, tr)
	n.Deliver = ro * tr.DeliverMessages * tr.DeliverLatency / DeliverBatch
	fmt.Fprintf(w, "==> Sell-out: a refused order costs its refused transaction, no read of the shards but each process's first each %.0f s (1 RCU a shard): %.0f instances, %.0f RCU/s on each shard partition\n",
		ShardHintSeconds, n.Orders, n.Orders/ShardHintSeconds)
	return n
}

func budgetOver(b bool) string {
	if b {
		return "  OVER (raise the budgets)"
	}
	return ""
}

func over(b bool) string {
	if b {
		return "  OVER (raise the quota)"
	}
	return ""
}

// PrintNeeds prints the quota requests and the on-sale context for the rate.
func PrintNeeds(w io.Writer, n Needs) {
	up := func(v float64, step float64) int { return int(math.Ceil(v*1.2/step) * step) } // 20% headroom
	fmt.Fprintln(w, "==> For this rate: quotas to request, then the on-sale context (docs/aws.md, Preparing an on-sale)")
	fmt.Fprintf(w, "    -c quotaTableReads=%d -c quotaTableWrites=%d -c quotaConcurrency=%d -c quotaApiRate=%d\n",
		max(up(math.Max(n.TableReads, n.IndexReads), 1000), TableQuota), max(up(math.Max(n.TableWrites, n.IndexWrites), 1000), TableQuota),
		max(up(n.Orders+n.Catalog+n.Deliver+100, 100), LambdaQuota), max(up(n.APIRate, 1000), APIRate))
	fmt.Fprintf(w, "    -c tableWarmReads=%d -c tableWarmWrites=%d -c indexWarmReads=%d -c indexWarmWrites=%d\n",
		max(up(n.TableReads, 1000), WarmReads), max(up(n.TableWrites, 1000), WarmWrites), max(up(n.IndexReads, 1000), WarmReads), max(up(n.IndexWrites, 1000), WarmWrites))
	fmt.Fprintf(w, "    -c reservedConcurrency=catalog=%d,orders=%d -c provisionedConcurrency=catalog=%d,orders=%d -c apiRateLimit=%d -c deliverConcurrency=%d\n",
		up(n.Catalog, 10), up(n.Orders, 10), up(n.Catalog, 10), up(n.Orders, 10), up(n.APIRate, 1000), min(max(up(n.Deliver, 10), DeliverInFlight/DeliverBatch), 1000))
	fmt.Fprintf(w, "    -c settings='{\"TIX_WEBHOOK_DOMAIN_RATE\":\"%d\",\"TIX_WEBHOOK_GLOBAL_RATE\":\"%d\",\"TIX_RATE_PK_READS\":\"%d\",\"TIX_RATE_PK_WRITES\":\"%d\"}'\n",
		up(n.WebhookRate, 100), up(n.WebhookRate, 100), KeyBudget(n.KeyReads), KeyBudget(n.KeyWrites))
}
