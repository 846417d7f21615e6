package ticketing

import "math/rand/v2"

// A limited promo code's uses are counted over shards, as a tier's stock
// is, so that an on-sale's orders with one code spread their counter
// updates over several items instead of all updating one: every shard
// counts up to its part of the code's max_uses, and an order records the
// shard it took (AppliedPromo.Shard), to which cancelling it gives the use
// back. Shard 0 is the code's former single counter: codes of events
// created before RateLayoutFrom keep it alone, and their orders (which
// name no shard) give back to it. A code of a later event has one shard
// per use up to MaxStockShards: at 5,000 orders/s with one code, 39
// transactions a second on each of 128 (docs/measurements.md, The on-sale
// model). Raising max_uses never lowers a shard's part; lowering it is
// refused while a shard holds more uses than its new part
// (catalogimport.CheckReimport), so the uses never pass the limit.

// PromoShardCaps are the parts of maxUses that the shards of a code of
// event e count up to; they add up to maxUses (none for an unlimited code).
func PromoShardCaps(e *Event, maxUses int) []int {
	if maxUses <= 0 {
		return nil
	}
	if e.MostShards() == LegacyShards {
		return []int{maxUses}
	}
	n := min(maxUses, MaxStockShards)
	caps := make([]int, n)
	for i := range caps {
		caps[i] = maxUses / n
		if i < maxUses%n {
			caps[i]++
		}
	}
	return caps
}

// PromoShardsFit reports whether the uses counted on each shard (shard ->
// uses) fit the shards of a code of e with maxUses: lowering max_uses
// below this would let the code be used past it.
func PromoShardsFit(e *Event, maxUses int, used map[int]int) bool {
	caps := PromoShardCaps(e, maxUses)
	for sh, n := range used {
		if n > 0 && (sh >= len(caps) || n > caps[sh]) {
			return false
		}
	}
	return true
}

// PickPromoShard is a shard other than avoid (-1: none) with room for one
// more use, chosen at random among them, given each shard's uses (nil:
// none known); false when none has room. Choosing among all of them, not
// the first from a random start, keeps orders from crowding onto the
// shard after a run of used-up ones.
func PickPromoShard(caps, used []int, avoid int) (int, bool) {
	var room []int
	for i, c := range caps {
		if i != avoid && (i >= len(used) || used[i] < c) {
			room = append(room, i)
		}
	}
	if len(room) == 0 {
		return 0, false
	}
	return room[rand.IntN(len(room))], true
}
