package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestItemContention: the shards of a tier that 1,024 orders share are
// contended at their mean (8 transactions per item: 1/128 an order, healthy
// to 6,400 orders/s); an order's own items (one per order, two
// transactions each) are not; a single promo code item is, most.
func TestItemContention(t *testing.T) {
	tx := map[string]int{}
	for i := range 1024 {
		id := string([]byte{byte('a' + i%26), byte('a' + i/26%26), byte('a' + i/676%26)})
		tx["ORD#ord_"+id+"qwertyuiop META"] = 2
	}
	for sh := range 128 {
		tx[fmt.Sprintf("STK#evt_onsale0001#test#%d T#-#tier_ga", sh)] = 7 + 2*(sh%2) // 8 on average
	}
	tx["STK#evt_onsale0001#test#0 T#-#tier_ga"] = 0 // shard 0 is the tier's unsharded key
	delete(tx, "STK#evt_onsale0001#test#0 T#-#tier_ga")
	tx["STK#evt_onsale0001#test T#-#tier_ga"] = 7
	tx["STK#evt_onsale0001#test P#SUMMER"] = 128
	cs := ItemContention(tx, 1024)
	if len(cs) != 2 {
		t.Fatalf("%+v, want the promo code and the shards", cs)
	}
	if cs[0].Shape != "STK#{evt}#test P#SUMMER" || cs[0].PerItem != 0.125 || cs[0].Ceiling() != 400 {
		t.Errorf("promo: %+v (ceiling %.0f), want 1/8 an order, healthy to 400 orders/s", cs[0], cs[0].Ceiling())
	}
	if cs[1].Items != 128 || math.Abs(cs[1].PerItem-1.0/128) > 1e-9 || math.Abs(cs[1].Ceiling()-6400) > 1e-6 {
		t.Errorf("shards: %+v (ceiling %.0f), want 128 items at 1/128 an order, healthy to 6,400 orders/s", cs[1], cs[1].Ceiling())
	}
}

// TestMeanShards: the shards of one shape carry their mean, a windowed
// counter's too; a key of its own and a lone rolling window keep theirs.
func TestMeanShards(t *testing.T) {
	hot := []Load{
		{Partition: Partition{Key: "RL#k#1"}, PerOp: map[string]Units{"read": {R: 0.3}}},
		{Partition: Partition{Key: "RL#k#2"}, PerOp: map[string]Units{"read": {R: 0.1}}},
		{Partition: Partition{Key: "WHES#org"}, PerOp: map[string]Units{"order": {W: 0.5}}},
		{Partition: Partition{Key: "W#{n} (rolling)"}, PerOp: map[string]Units{"order": {W: 0.7}}},
		{Partition: Partition{Key: "RL#k#read#{n}#s1 (rolling)"}, PerOp: map[string]Units{"read": {R: 0.3}}},
		{Partition: Partition{Key: "RL#k#read#{n}#s2 (rolling)"}, PerOp: map[string]Units{"read": {R: 0.1}}},
	}
	got := MeanShards(hot)
	if got[0].PerOp["read"].R != 0.2 || got[1].PerOp["read"].R != 0.2 {
		t.Errorf("shards: %v %v, want 0.2 each", got[0].PerOp, got[1].PerOp)
	}
	if got[2].PerOp["order"].W != 0.5 || got[3].PerOp["order"].W != 0.7 {
		t.Errorf("single and rolling: %v %v", got[2].PerOp, got[3].PerOp)
	}
	if r := got[4].PerOp["read"].R; math.Abs(r-0.2) > 1e-9 || got[5].PerOp["read"].R != r {
		t.Errorf("shards of a windowed counter: %v %v, want 0.2 each", got[4].PerOp, got[5].PerOp)
	}
	if c, _ := Ceiling(got, "read"); math.Abs(c-15000) > 1e-6 {
		t.Errorf("read ceiling %.0f, want 15,000 (3,000 RCU / 0.2)", c)
	}
}

// TestItemContention_OwnItemsAndClients: items that differ by an id (each
// order's) and per-client counters are left out, however few the orders;
// the quarter items of a tally are shared, one quarter's at a time.
func TestItemContention_OwnItemsAndClients(t *testing.T) {
	tx := map[string]int{
		"ORD#ord_AbCdEfGhIjKl META": 6, "ORD#ord_ZyXwVuTsRqPo META": 6,
		"CAP#org_onsale#test#127.1.0.1#evt_onsale CAP": 9, "CAP#org_onsale#test#127.1.0.2#evt_onsale CAP": 9,
		"TALLY#org_onsale#test#3 Q#2026-11-26T06:00": 2, "TALLY#org_onsale#test#9 Q#2026-11-26T06:15": 2,
	}
	cs := ItemContention(tx, 2)
	if len(cs) != 1 || cs[0].Items != 1 || cs[0].PerItem != 2 {
		t.Fatalf("%+v, want only the tally: one item a quarter, in both transactions of each order", cs)
	}
}

// TestClientCounters: a client's own counter, in two transactions of each
// of its orders (taken, given back at payment), is at 50 a second for a
// client at the most creations a second it gets: the healthy rate.
func TestClientCounters(t *testing.T) {
	tx := map[string]int{
		"ORD#ord_AbCdEfGhIjKl META": 6, "ORD#ord_ZyXwVuTsRqPo META": 6,
		"PCAP#org_onsale#test#127.1.0.1#evt_onsale CAP": 2, "PCAP#org_onsale#test#127.1.0.2#evt_onsale CAP": 2,
		"TALLY#org_onsale#test#3 Q#2026-11-26T06:00": 2,
	}
	cs := ClientCounters(tx, 2)
	if len(cs) != 1 || cs[0].PerOp != 2 || cs[0].Rate() != 50 {
		t.Fatalf("%+v, want one shape, 2 transactions an order, 50/s at 25 orders/s", cs)
	}
	if cs[0].Rate() > HealthyItemRate {
		t.Errorf("a client's counter at %.0f transactions/s, above the healthy %.0f", cs[0].Rate(), HealthyItemRate)
	}
}

// TestDeliveries: 5,000 orders/s, each a webhook and an email job at 0.2 s,
// are 10,000 messages/s against the deliver mapping's 200 at once (1,000/s):
// a 10-minute rush's last one leaves 90 minutes late; 400 orders/s pass.
func TestDeliveries(t *testing.T) {
	tr := Traffic{DeliverMessages: 2, DeliverLatency: 0.2, Minutes: 10}
	var out strings.Builder
	if lag := Deliveries(&out, 5000, tr); math.Abs(lag-5400) > 1e-6 || !strings.Contains(out.String(), "OVER") {
		t.Errorf("lag %.0f s, want 5,400 (90 minutes), flagged; %s", lag, out.String())
	}
	out.Reset()
	if lag := Deliveries(&out, 400, tr); lag != 0 || strings.Contains(out.String(), "OVER") {
		t.Errorf("400 orders/s: lag %.0f s, want none; %s", lag, out.String())
	}
	// The context that lifts the cap: 10,000 messages/s x 0.2 s / 10 a batch
	// = 200 invocations, 240 with the headroom; never past SQS's 1,000.
	for deliver, want := range map[float64]string{200: "-c deliverConcurrency=240", 5000: "-c deliverConcurrency=1000", 1: "-c deliverConcurrency=20"} {
		out.Reset()
		PrintNeeds(&out, Needs{Deliver: deliver})
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("Deliver %v: want %q in\n%s", deliver, want, out.String())
		}
	}
}

// TestItemContention_QuarterWindows: a run across a quarter's end touches
// each tally shard in two quarters; the shards are busy at the rate of one
// quarter's items, not of both together. A client's idempotency record
// (a request's own, by its hash) is no client counter.
func TestItemContention_QuarterWindows(t *testing.T) {
	tx := map[string]int{}
	for sh := range 256 {
		tx[fmt.Sprintf("TALLY#org_onsale#test#%d Q#2026-11-26T09:30", sh)] = 2
		tx[fmt.Sprintf("TALLY#org_onsale#test#%d Q#2026-11-26T09:45", sh)] = 2
	}
	tx["IDEM#org#test#order#pk#key_x#127.1.0.1#0123456789abcdef0123 IDEM"] = 1
	cs := ItemContention(tx, 1024)
	if len(cs) != 1 || cs[0].Items != 256 || math.Abs(cs[0].PerItem-4.0/1024) > 1e-9 {
		t.Fatalf("%+v, want 256 items at once, 4 transactions each over 1,024 orders", cs)
	}
	if cc := ClientCounters(tx, 1024); len(cc) != 0 {
		t.Errorf("client counters %+v, want none", cc)
	}
}
