package ticketing

import "math/rand/v2"

// A general-admission or standing tier's stock is split over counter shards,
// so that an on-sale's orders spread their writes over several items (and
// partitions) instead of all updating one counter. Shards hold ShardUnit units
// each until a tier has MaxStockShards of them; a larger tier spreads its
// capacity evenly over MaxStockShards. Raising a tier's capacity never lowers
// a shard's cap, so stock already sold always fits.
const (
	ShardUnit      = 64
	MaxStockShards = 16
)

// ShardTake is what an order line took from one shard of its tier.
type ShardTake struct {
	Shard    int `json:"shard"`
	Quantity int `json:"qty"`
}

// StockShards is how many counter shards a tier of capacity has (at least one).
func StockShards(capacity int) int {
	n := (capacity + ShardUnit - 1) / ShardUnit
	return min(max(n, 1), MaxStockShards)
}

// ShardCaps are the capacities of a tier's shards; they add up to capacity.
func ShardCaps(capacity int) []int {
	n := StockShards(capacity)
	caps := make([]int, n)
	if capacity <= ShardUnit*MaxStockShards {
		for i := range caps {
			caps[i] = min(max(capacity-ShardUnit*i, 0), ShardUnit)
		}
		return caps
	}
	for i := range caps {
		caps[i] = capacity / n
		if i < capacity%n {
			caps[i]++
		}
	}
	return caps
}

// Takes is what the line took from its tier's shards; a line written before
// stock was sharded took everything from shard 0, which is the tier's former
// single counter.
func (l OrderLine) Takes() []ShardTake {
	if l.Seated {
		return nil
	}
	if len(l.Shards) == 0 {
		return []ShardTake{{Shard: 0, Quantity: l.Quantity}}
	}
	return l.Shards
}

// RandomShard picks the shard an order tries first, so that concurrent
// orders spread over the tier's shards.
func RandomShard(capacity int) int { return rand.IntN(StockShards(capacity)) }

// PlanTake chooses where qty units come from, given each shard's cap and
// units sold: the first shard from start on with room for all of them, else
// (stock fragmented) as many as fit from each shard in turn. It returns false
// when the tier as a whole has fewer than qty units left.
func PlanTake(caps, sold []int, qty, start int) ([]ShardTake, bool) {
	n := len(caps)
	room := func(i int) int {
		s := 0
		if i < len(sold) {
			s = sold[i]
		}
		return max(caps[i]-s, 0)
	}
	for k := range n {
		i := (start + k) % n
		if room(i) >= qty {
			return []ShardTake{{Shard: i, Quantity: qty}}, true
		}
	}
	var takes []ShardTake
	left := qty
	for k := range n {
		if left == 0 {
			break
		}
		i := (start + k) % n
		if r := min(room(i), left); r > 0 {
			takes = append(takes, ShardTake{Shard: i, Quantity: r})
			left -= r
		}
	}
	return takes, left == 0
}
