package ticketing_test

import (
	"testing"

	"tix/internal/ticketing"
)

// Shard caps add up to the capacity, and raising a capacity never lowers a
// shard's cap (stock sold under the old capacity always fits the new one).
func TestShardCaps(t *testing.T) {
	if n := ticketing.StockShards(1000); n != 16 {
		t.Fatalf("a tier of 1,000 has %d shards, want 16", n)
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
