package inmem

import "tix/internal/ticketing"

// Tier stock is kept per shard (ticketing.TierShardCaps), as the DynamoDB store
// keeps it, so that both take, give back and report it alike.

// shardSold is the units sold of each of a tier's n shards.
func (s *state) shardSold(k tierKey, n int) []int {
	sold := make([]int, n)
	for sh, u := range s.sold[k] {
		if sh < n {
			sold[sh] = u
		}
	}
	return sold
}

// planLines chooses every tier line's shards as the DynamoDB store ends up
// choosing them: one shard with room from a random start, else several. A
// tier without enough units left is a *StockError.
func (s *state) planLines(o *ticketing.Order, ev *ticketing.Event) error {
	for i := range o.Lines {
		l := &o.Lines[i]
		if l.Seated {
			continue
		}
		t, ok := ev.Tier(l.TierID)
		if !ok || t.Capacity < l.Quantity {
			return &ticketing.StockError{Index: i}
		}
		caps := ticketing.TierShardCaps(ev, t.Capacity)
		takes, ok := ticketing.PlanTake(caps, s.shardSold(lineTier(o, *l), len(caps)), l.Quantity, ticketing.RandomShard(len(caps)))
		if !ok {
			return &ticketing.StockError{Index: i}
		}
		l.Shards = takes
	}
	return nil
}

// moveLine adds (sign 1) or gives back (sign -1) what a tier line takes from its shards.
func (s *state) moveLine(o *ticketing.Order, l ticketing.OrderLine, sign int) {
	k := lineTier(o, l)
	if s.sold[k] == nil {
		s.sold[k] = map[int]int{}
	}
	for _, t := range l.Takes() {
		s.sold[k][t.Shard] += sign * t.Quantity
	}
}
