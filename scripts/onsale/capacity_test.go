package main

import (
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"strconv"
	"testing"
	"time"
)

var testSchema = Schema{PK: "PK", SK: "SK", Indexes: map[string]string{"GSI1": "GSI1PK", "GSI2": "GSI2PK"}}

func parse(t *testing.T, body string) request {
	t.Helper()
	var r request
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func tables(ts []touch) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.table.String())
	}
	return out
}

// TestTouches: the partition keys of each kind of request.
func TestTouches(t *testing.T) {
	cases := []struct {
		op, body string
		want     []string
		indexes  map[string]string // of the first item
	}{
		{"GetItem", `{"Key":{"PK":{"S":"EVT#e1"},"SK":{"S":"META"}}}`, []string{"EVT#e1"}, map[string]string{}},
		{"PutItem", `{"Item":{"PK":{"S":"ORD#o1"},"SK":{"S":"META"},"GSI1PK":{"S":"ORDERS#org"},"n":{"N":"1"}}}`,
			[]string{"ORD#o1"}, map[string]string{"GSI1": "ORDERS#org"}},
		{"UpdateItem", `{"Key":{"PK":{"S":"ORD#o1"},"SK":{"S":"META"}},"UpdateExpression":"SET #g = :g, st = :s",
			"ExpressionAttributeNames":{"#g":"GSI2PK"},"ExpressionAttributeValues":{":g":{"S":"OUTBOX#3"},":s":{"S":"paid"}}}`,
			[]string{"ORD#o1"}, map[string]string{"GSI2": "OUTBOX#3"}},
		{"Query", `{"KeyConditionExpression":"#p = :p AND begins_with(SK, :s)","ExpressionAttributeNames":{"#p":"PK"},
			"ExpressionAttributeValues":{":p":{"S":"EVT#e1"},":s":{"S":"T"}}}`, []string{"EVT#e1"}, nil},
		{"Query", `{"IndexName":"GSI1","KeyConditionExpression":"GSI1PK = :p","ExpressionAttributeValues":{":p":{"S":"ORDERS#org"}}}`,
			[]string{"GSI1:ORDERS#org"}, nil},
		{"TransactWriteItems", `{"TransactItems":[
			{"Update":{"Key":{"PK":{"S":"STK#e1"},"SK":{"S":"T"}},"UpdateExpression":"SET sold = sold + :q","ExpressionAttributeValues":{":q":{"N":"1"}}}},
			{"Put":{"Item":{"PK":{"S":"ORD#o1"},"SK":{"S":"META"}}}},
			{"ConditionCheck":{"Key":{"PK":{"S":"KEY#k"},"SK":{"S":"KEY"}}}}]}`, []string{"STK#e1", "ORD#o1", "KEY#k"}, map[string]string{}},
		{"BatchGetItem", `{"RequestItems":{"t":{"Keys":[{"PK":{"S":"A"},"SK":{"S":"1"}},{"PK":{"S":"B"},"SK":{"S":"1"}}]}}}`,
			[]string{"A", "B"}, map[string]string{}},
		{"BatchWriteItem", `{"RequestItems":{"t":[{"PutRequest":{"Item":{"PK":{"S":"A"},"SK":{"S":"1"}}}},{"DeleteRequest":{"Key":{"PK":{"S":"B"},"SK":{"S":"1"}}}}]}}`,
			[]string{"A", "B"}, map[string]string{}},
	}
	for _, c := range cases {
		ts := testSchema.touches(c.op, parse(t, c.body))
		if got := tables(ts); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: partitions %v, want %v", c.op, c.body, got, c.want)
		}
		if c.indexes != nil && !reflect.DeepEqual(ts[0].indexes, c.indexes) {
			t.Errorf("%s: index keys %v, want %v", c.op, ts[0].indexes, c.indexes)
		}
	}
}

// TestAttribute: a transaction's table units are split evenly over its
// items, an index's units go to the items that show that index's key, and a
// refused write is billed per item.
func TestAttribute(t *testing.T) {
	r := parse(t, `{"TransactItems":[
		{"Update":{"Key":{"PK":{"S":"STK#e1"},"SK":{"S":"T"}}}},
		{"Put":{"Item":{"PK":{"S":"ORD#o1"},"SK":{"S":"META"},"GSI1PK":{"S":"ORDERS#org"}}}},
		{"Put":{"Item":{"PK":{"S":"IDEM#x"},"SK":{"S":"IDEM"}}}},
		{"ConditionCheck":{"Key":{"PK":{"S":"EVT#e1"},"SK":{"S":"META"}}}}]}`)
	ts := testSchema.touches("TransactWriteItems", r)
	ts[3].indexes["GSI1"] = "EVENTS#org" // known from the event's own writes: a check writes no index entry
	var cc []consumed
	if err := json.Unmarshal([]byte(`[{"TableName":"t","CapacityUnits":10,"Table":{"CapacityUnits":8},
		"GlobalSecondaryIndexes":{"GSI1":{"CapacityUnits":2}}}]`), &cc); err != nil {
		t.Fatal(err)
	}
	got := attribute("TransactWriteItems", ts, cc, false, false)
	want := map[Partition]Units{
		{Key: "STK#e1"}: {W: 2}, {Key: "ORD#o1"}: {W: 2}, {Key: "IDEM#x"}: {W: 2}, {Key: "EVT#e1"}: {W: 2},
		{Index: "GSI1", Key: "ORDERS#org"}: {W: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("transaction: %v, want %v", got, want)
	}
	if got := attribute("TransactWriteItems", ts, nil, true, true); got[Partition{Key: "STK#e1"}].W != 2 || len(got) != 4 {
		t.Errorf("cancelled transaction: %v, want 2 WCU on each of the 4 items", got)
	}
	read := testSchema.touches("Query", parse(t, `{"IndexName":"GSI1","KeyConditionExpression":"GSI1PK = :p","ExpressionAttributeValues":{":p":{"S":"ORDERS#org"}}}`))
	if got := attribute("Query", read, parseConsumed(json.RawMessage(`{"CapacityUnits":1.5,"Table":{"CapacityUnits":0},"GlobalSecondaryIndexes":{"GSI1":{"CapacityUnits":1.5}}}`)), false, true); !reflect.DeepEqual(got, map[Partition]Units{{Index: "GSI1", Key: "ORDERS#org"}: {R: 1.5}}) {
		t.Errorf("index query: %v, want 1.5 RCU on GSI1:ORDERS#org", got)
	}
}

// TestResolve: an update that does not set an item's index key is charged
// to the index partition an earlier write of the item showed.
func TestResolve(t *testing.T) {
	m := newMeter(testSchema)
	put := testSchema.touches("PutItem", parse(t, `{"Item":{"PK":{"S":"ORD#o1"},"SK":{"S":"META"},"GSI1PK":{"S":"ORDERS#org"}}}`))
	m.resolve(put)
	upd := testSchema.touches("UpdateItem", parse(t, `{"Key":{"PK":{"S":"ORD#o1"},"SK":{"S":"META"}},"UpdateExpression":"SET st = :s"}`))
	m.resolve(upd)
	got := attribute("UpdateItem", upd, parseConsumed(json.RawMessage(`{"CapacityUnits":2,"Table":{"CapacityUnits":1},"GlobalSecondaryIndexes":{"GSI1":{"CapacityUnits":1}}}`)), false, true)
	if got[Partition{Index: "GSI1", Key: "ORDERS#org"}].W != 1 || got[Partition{Key: "ORD#o1"}].W != 1 {
		t.Errorf("update: %v, want 1 WCU on ORD#o1 and 1 on GSI1:ORDERS#org", got)
	}
}

// TestShape: per-instance parts become placeholders, names stay.
func TestShape(t *testing.T) {
	for key, want := range map[string]string{
		"ORD#ord_SbjlmPNcjkKodlTgAUtQ":    "ORD#{ord}",
		"STK#evt_onsale#test":             "STK#evt_onsale#test",
		"TKT#test#TIX-ACSEJK":             "TKT#test#{code}",
		"WRL#host:127.0.0.1#1795452009":   "WRL#host:{ip}#{n}",
		"KEY#4c0b77bc710897545e608502392": "KEY#{hash}",
		"OUTBOX#3":                        "OUTBOX#{n}",
	} {
		if got := Shape(Partition{Key: key}); got != want {
			t.Errorf("Shape(%s) = %s, want %s", key, got, want)
		}
	}
}

// TestSplitAndCeiling: per-order partitions are spread; shards used side by
// side are each their own partition; time windows used one after another
// are one; the ceiling is the limit over the largest units per operation.
func TestSplitAndCeiling(t *testing.T) {
	t0 := time.Unix(0, 0)
	order := Phase{Name: "order", Ops: 100, Usage: map[Partition]Units{}, Spans: map[Partition]Span{}}
	for i := range 100 {
		order.Usage[Partition{Key: "ORD#ord_" + string(rune('a'+i%26)) + "0000000000" + string(rune('a'+i/26))}] = Units{W: 4}
	}
	for i := range 4 { // shards, all the time
		p := Partition{Key: "STK#evt_x#" + string(rune('0'+i))}
		order.Usage[p] = Units{W: 50} // 0.5 WCU per order each
		order.Spans[p] = Span{t0, t0.Add(10 * time.Second)}
	}
	for i := range 5 { // one-second windows, one after another
		p := Partition{Key: "WRL#*#" + string(rune('0'+i))}
		order.Usage[p] = Units{W: 40}
		order.Spans[p] = Span{t0.Add(time.Duration(i) * 2 * time.Second), t0.Add(time.Duration(i)*2*time.Second + time.Second)}
	}
	for i := range 40 { // many shards, each used now and then throughout the phase
		p := Partition{Key: "OUTBOX#" + string(rune('A'+i))}
		order.Usage[p] = Units{W: 10}
		order.Spans[p] = Span{t0.Add(time.Duration(i%3) * time.Second), t0.Add(time.Duration(7+i%3) * time.Second)}
	}
	order.Usage[Partition{Key: "EVT#evt_x"}] = Units{W: 0}
	read := Phase{Name: "read", Ops: 1000, Usage: map[Partition]Units{{Key: "EVT#evt_x"}: {R: 500}, {Key: "KEY#k"}: {W: 250}}}
	hot, spread := Split([]Phase{order, read})
	if len(spread) != 1 || spread[0].Shape != "ORD#{ord}" || spread[0].Keys != 100 || spread[0].Max.W != 4 {
		t.Errorf("spread %+v, want ORD#{ord}: 100 keys, at most 4 WCU", spread)
	}
	per := map[string]Units{}
	for _, l := range hot {
		per[l.Partition.String()] = l.PerOp["order"]
	}
	if len(hot) != 47 || per["STK#evt_x#0"].W != 0.5 || per["WRL#*#{n} (rolling)"].W != 2 || per["OUTBOX#A"].W != 0.1 {
		t.Errorf("hot %v: want 4 shards at 0.5 WCU/order, the rolling window at 2, 40 outbox shards at 0.1, EVT and KEY", per)
	}
	n, at := Ceiling(hot, "order")
	if n != 500 || at == nil || at.Partition.Key != "WRL#*#{n} (rolling)" {
		t.Errorf("order ceiling %v at %v, want 500 (1,000 WCU/s over 2 WCU per order) on the window", n, at)
	}
	m, at := Ceiling(hot, "read")
	if m != 4000 || at.Partition.Key != "KEY#k" { // 1,000 WCU/s over 0.25, before 3,000 RCU/s over 0.5 (6,000)
		t.Errorf("read ceiling %v at %v, want 4000 on KEY#k", m, at)
	}
	if u := hot[0].At(map[string]float64{"order": 5000, "read": 20000}); math.IsNaN(u.W) {
		t.Errorf("At: %v", u)
	}
}

// TestShardedWindows: a one-second window split over shard items
// (WRL#<key>#<second>#<shard>) counts as one rolling partition per shard (the
// second is the number that grows with time), not as spread (each item is used
// briefly) nor as one partition per second (its shards are side by side); keys
// with two numbers used side by side stay their own partitions.
func TestShardedWindows(t *testing.T) {
	t0 := time.Unix(0, 0)
	order := Phase{Name: "order", Ops: 100, Usage: map[Partition]Units{}, Spans: map[Partition]Span{}}
	for sec := range 5 {
		for shard := range 4 {
			p := Partition{Key: "WRL#*#" + strconv.Itoa(1795452000+sec) + "#" + strconv.Itoa(shard)}
			order.Usage[p] = Units{W: 5}
			// each used once, the shards of a second in no particular order
			at := t0.Add(time.Duration(sec)*time.Second + time.Duration((shard*3+sec)%4)*200*time.Millisecond)
			order.Spans[p] = Span{at, at}
		}
	}
	for i := range 3 {
		p := Partition{Key: "PAIR#" + strconv.Itoa(i) + "#" + strconv.Itoa(i+10)}
		order.Usage[p] = Units{W: 10}
		order.Spans[p] = Span{t0, t0.Add(5 * time.Second)}
	}
	hot, spread := Split([]Phase{order})
	if len(spread) != 0 {
		t.Errorf("spread %+v, want none", spread)
	}
	per := map[string]float64{}
	for _, l := range hot {
		per[l.Partition.String()] = l.PerOp["order"].W
	}
	want := map[string]float64{
		"WRL#*#{n}#0 (rolling)": 0.25, "WRL#*#{n}#1 (rolling)": 0.25, "WRL#*#{n}#2 (rolling)": 0.25, "WRL#*#{n}#3 (rolling)": 0.25,
		"PAIR#0#10": 0.1, "PAIR#1#11": 0.1, "PAIR#2#12": 0.1,
	}
	if !maps.Equal(per, want) {
		t.Errorf("hot %v, want %v", per, want)
	}
}
