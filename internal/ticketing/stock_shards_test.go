package ticketing_test

import (
	"reflect"
	"testing"

	"tix/internal/ticketing"
)

// Shard caps add up to the capacity, and raising a capacity never lowers a
// shard's cap (stock sold under the old capacity always fits the new one).
func TestShardCaps(t *testing.T) {
	// One shard per ShardUnit units begun, at least one, at most MaxStockShards.
	for capacity, want := range map[int]int{0: 1, 1: 1, 64: 1, 65: 2, 128: 2, 129: 3, 1000: 16, 1024: 16, 5000: 16} {
		if n := ticketing.StockShards(capacity); n != want {
			t.Errorf("a tier of %d has %d shards, want %d", capacity, n, want)
		}
	}
	prev := ticketing.ShardCaps(0)
	for c := 0; c <= 5000; c++ {
		caps, sum := ticketing.ShardCaps(c), 0
		for i, v := range caps {
			sum += v
			if i < len(prev) && v < prev[i] {
				t.Fatalf("capacity %d: shard %d cap %d below %d at capacity %d", c, i, v, prev[i], c-1)
			}
		}
		if sum != c || len(caps) != ticketing.StockShards(c) || len(caps) > ticketing.MaxStockShards {
			t.Fatalf("capacity %d: caps %v (sum %d)", c, caps, sum)
		}
		prev = caps
	}
}

func TestPlanTake(t *testing.T) {
	caps := []int{64, 64, 2}
	for _, c := range []struct {
		name  string
		sold  []int
		qty   int
		start int
		want  []ticketing.ShardTake
		ok    bool
	}{
		{"the start shard", nil, 3, 1, []ticketing.ShardTake{{Shard: 1, Quantity: 3}}, true},
		{"the next with room", []int{0, 63, 0}, 3, 1, []ticketing.ShardTake{{Shard: 0, Quantity: 3}}, true},
		{"fragmented", []int{60, 62, 0}, 8, 0, []ticketing.ShardTake{{Shard: 0, Quantity: 4}, {Shard: 1, Quantity: 2}, {Shard: 2, Quantity: 2}}, true},
		{"not enough left", []int{60, 62, 0}, 9, 0, nil, false},
		{"an exact fit", []int{0, 61, 0}, 3, 1, []ticketing.ShardTake{{Shard: 1, Quantity: 3}}, true},
	} {
		got, ok := ticketing.PlanTake(caps, c.sold, c.qty, c.start)
		if ok != c.ok || (ok && len(got) != len(c.want)) {
			t.Fatalf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
		for i := range c.want {
			if ok && got[i] != c.want[i] {
				t.Fatalf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// The shards are tried in turn from the start one, wrapping around, and a
// full shard is passed over: nothing is taken from it.
func TestPlanTake_TriesShardsInTurnFromTheStart(t *testing.T) {
	caps := []int{64, 64, 64}
	if got, ok := ticketing.PlanTake(caps, []int{0, 64, 0}, 3, 1); !ok || len(got) != 1 || got[0] != (ticketing.ShardTake{Shard: 2, Quantity: 3}) {
		t.Fatalf("start 1 full: %v %v, want all from shard 2", got, ok)
	}
	got, ok := ticketing.PlanTake(caps, []int{62, 64, 60}, 6, 0)
	want := []ticketing.ShardTake{{Shard: 0, Quantity: 2}, {Shard: 2, Quantity: 4}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("fragmented around a full shard: %v %v, want %v", got, ok, want)
	}
}

// A line's takes: none for a seat, everything from shard 0 for a line
// written before stock was sharded, else the shards it recorded.
func TestOrderLine_Takes(t *testing.T) {
	if got := (ticketing.OrderLine{Seated: true, Quantity: 1}).Takes(); got != nil {
		t.Errorf("a seat's takes %v, want none", got)
	}
	if got := (ticketing.OrderLine{Quantity: 3}).Takes(); !reflect.DeepEqual(got, []ticketing.ShardTake{{Shard: 0, Quantity: 3}}) {
		t.Errorf("an unsharded line's takes %v, want all from shard 0", got)
	}
	shards := []ticketing.ShardTake{{Shard: 2, Quantity: 1}, {Shard: 5, Quantity: 2}}
	if got := (ticketing.OrderLine{Quantity: 3, Shards: shards}).Takes(); !reflect.DeepEqual(got, shards) {
		t.Errorf("a sharded line's takes %v, want %v", got, shards)
	}
}

// A limited code's shard parts add up to its max_uses, one shard a use up
// to MaxStockShards (an event before RateLayoutFrom: one, its former
// counter); raising max_uses never lowers a part; a pick is a shard with room.
func TestPromoShardCaps(t *testing.T) {
	legacy := &ticketing.Event{}
	if caps := ticketing.PromoShardCaps(legacy, 5000); !reflect.DeepEqual(caps, []int{5000}) {
		t.Fatalf("legacy code: %v, want its one counter", caps)
	}
	e := &ticketing.Event{CreatedAt: ticketing.RateLayoutFrom}
	if caps := ticketing.PromoShardCaps(e, 0); caps != nil {
		t.Fatalf("unlimited code: %v", caps)
	}
	var prev []int
	for uses := 1; uses <= 1000; uses++ {
		caps, sum := ticketing.PromoShardCaps(e, uses), 0
		for i, c := range caps {
			sum += c
			if c < 1 || i < len(prev) && c < prev[i] {
				t.Fatalf("max_uses %d: part %d is %d (was %v)", uses, i, c, prev)
			}
		}
		if sum != uses || len(caps) != min(uses, ticketing.MaxStockShards) {
			t.Fatalf("max_uses %d: parts %v", uses, caps)
		}
		prev = caps
	}
	caps := []int{1, 2, 1}
	for range 50 {
		if sh, ok := ticketing.PickPromoShard(caps, []int{1, 1, 1}, -1); !ok || sh != 1 {
			t.Fatalf("picked %d, %v; want the one shard with room", sh, ok)
		}
		if sh, ok := ticketing.PickPromoShard(caps, nil, 1); !ok || sh == 1 {
			t.Fatalf("picked %d, %v; want one other than the shard to avoid", sh, ok)
		}
	}
	if _, ok := ticketing.PickPromoShard(caps, []int{1, 2, 1}, -1); ok {
		t.Fatal("picked a shard of a used-up code")
	}
}
