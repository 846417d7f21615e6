package ticketing

import (
	"math/rand/v2"
	"time"
)

// A general-admission or standing tier's stock is split over counter shards,
// so that an on-sale's orders spread their writes over several items (and
// partitions) instead of all updating one counter. Shards hold ShardUnit units
// each until a tier has its layout's most shards; a larger tier spreads its
// capacity evenly over them. Raising a tier's capacity never lowers a
// shard's cap, so stock already sold always fits.
//
// Two layouts differ only for tiers of more than LegacyShards*ShardUnit
// units: events created before RateLayoutFrom keep at most LegacyShards
// shards (the stock they sold is laid out so); later ones have up to
// MaxStockShards, so that no shard item is in more transactions a second
// than DynamoDB commits on one item without conflicts at the on-sale rate
// (docs/measurements.md, The on-sale model: 5,000 orders/s over 128 shards
// is about 39 a second on each).
const (
	ShardUnit      = 64
	LegacyShards   = 16
	MaxStockShards = 128
)

// RateLayoutFrom is when events began to get the on-sale layout of up to
// MaxStockShards shards per tier.
var RateLayoutFrom = time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)

// MostShards is the most shards a tier of e may have: MaxStockShards for an
// event created from RateLayoutFrom on, LegacyShards before.
func (e *Event) MostShards() int {
	if e == nil || e.CreatedAt.Before(RateLayoutFrom) {
		return LegacyShards
	}
	return MaxStockShards
}

// TierShardCaps are the capacities of the shards of a tier of capacity in
// event e's layout; they add up to capacity.
func TierShardCaps(e *Event, capacity int) []int { return shardCaps(capacity, e.MostShards()) }

// TierStockShards is how many shards a tier of capacity has in e's layout.
func TierStockShards(e *Event, capacity int) int { return stockShards(capacity, e.MostShards()) }

// ShardTake is what an order line took from one shard of its tier.
type ShardTake struct {
	Shard    int `json:"shard"`
	Quantity int `json:"qty"`
}

// StockShards is how many counter shards a tier of capacity has in the
// legacy layout (at least one).
func StockShards(capacity int) int { return stockShards(capacity, LegacyShards) }

func stockShards(capacity, most int) int {
	n := (capacity + ShardUnit - 1) / ShardUnit
	return min(max(n, 1), most)
}

// ShardCaps are the capacities of a tier's shards in the legacy layout; they
// add up to capacity.
func ShardCaps(capacity int) []int { return shardCaps(capacity, LegacyShards) }

func shardCaps(capacity, most int) []int {
	n := stockShards(capacity, most)
	caps := make([]int, n)
	if capacity <= ShardUnit*most {
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

// RandomShard picks the shard an order tries first among n, so that
// concurrent orders spread over the tier's shards.
func RandomShard(n int) int { return rand.IntN(max(n, 1)) }

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
