package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// Stock shards of general-admission and standing tiers (ticketing.TierShardCaps):
// shard 0 is the tier's counter in the event's stock partition, the item a
// tier had before stock was sharded, so existing counters and orders need no
// migration; shard k > 0 lives in a partition of its own, shared by the
// event's tiers and occurrences, so that an on-sale's writes spread over
// up to MaxStockShards partitions.
func stockShardPK(event, env string, shard int) string {
	if shard == 0 {
		return stockPK(event, env)
	}
	return stockPK(event, env) + "#" + strconv.Itoa(shard)
}

// seatKey is a seat's state item, in its block's stock partition (block 0:
// the event's own, where every seat of the one-partition layout lives).
func seatKey(event string, env ticketing.Environment, occ, seatID string, block int) map[string]types.AttributeValue {
	return keyOf(stockShardPK(event, string(env), block), stockSeatSK(occ, seatID))
}

// lineSeatKey is the state item of a seated order line's seat.
func lineSeatKey(o *ticketing.Order, l ticketing.OrderLine) map[string]types.AttributeValue {
	return seatKey(o.EventID, o.Environment, occKey(o), l.Seat.SeatID, l.Seat.Block)
}

func shardKey(o *ticketing.Order, tierID string, shard int) map[string]types.AttributeValue {
	return keyOf(stockShardPK(o.EventID, string(o.Environment), shard), stockTierSK(occKey(o), tierID))
}

// shardTake adds qty to a shard's units sold, never past its cap.
func (s *Orders) shardTake(o *ticketing.Order, tierID string, t ticketing.ShardTake, shardCap int) *types.Update {
	e := newExprs()
	return &types.Update{
		TableName: aws.String(s.table), Key: shardKey(o, tierID, t.Shard),
		UpdateExpression: aws.String("ADD " + e.n("sold") + " " + e.d(int64(t.Quantity))),
		ConditionExpression: aws.String("(attribute_not_exists(" + e.n("sold") + ") AND " + e.d(int64(t.Quantity)) + " <= " + e.d(int64(shardCap)) +
			") OR " + e.n("sold") + " <= " + e.d(int64(shardCap-t.Quantity))),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}

// lineGiveBack returns what a tier line took to the shards it took it from;
// the process forgets the tier's shard levels, which no longer refuse an order.
func (s *Orders) lineGiveBack(o *ticketing.Order, l ticketing.OrderLine) []types.TransactWriteItem {
	s.shardHints.forget(hintKey(o, l.TierID))
	var items []types.TransactWriteItem
	for _, t := range l.Takes() {
		e := newExprs()
		items = append(items, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: shardKey(o, l.TierID, t.Shard),
			UpdateExpression:         aws.String("ADD " + e.n("sold") + " " + e.d(int64(-t.Quantity))),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		}})
	}
	return items
}

// shardHintTTL is how long the shard levels of a tier read after a refusal
// steer the process's next orders of that tier: in a sell-out each process
// reads every shard once per shardHintTTL, so 1,500 processes read each
// shard partition 750 times a second (strongly consistent: 750 RCU/s of its
// 3,000).
const shardHintTTL = 2 * time.Second

// shardHints remember, per tier, the shard levels read last, raised by the
// refusals seen since. They choose which shard an order tries first (the
// transaction's conditions decide), and after a shard refuses a line they
// plan it again without reading every shard: a line for more than they show
// left is refused then. In a sell-out a refused order costs its refused
// transaction and no read of the shards, but the first refusal of each
// process each shardHintTTL. Stock given back in another process is seen
// within shardHintTTL, as a cached availability read sees it; given back in
// this one, at once.
type shardHints struct {
	mu     sync.Mutex
	levels map[string]shardHint
}

type shardHint struct {
	sold []int
	at   time.Time
}

func hintKey(o *ticketing.Order, tierID string) string {
	return o.EventID + "#" + string(o.Environment) + "#" + occKey(o) + "#" + tierID
}

func (h *shardHints) get(key string) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if hint, ok := h.levels[key]; ok && time.Since(hint.at) < shardHintTTL {
		return hint.sold
	}
	return nil
}

func (h *shardHints) forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.levels, key)
}

// refused raises shard's level in a fresh hint to at least where take did
// not fit under its cap, and returns the levels (nil: no fresh hint).
func (h *shardHints) refused(key string, shard, shardCap, take int) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	hint, ok := h.levels[key]
	if !ok || time.Since(hint.at) >= shardHintTTL || shard >= len(hint.sold) {
		return nil
	}
	sold := slices.Clone(hint.sold)
	sold[shard] = max(sold[shard], shardCap-take+1)
	h.levels[key] = shardHint{sold: sold, at: hint.at}
	return sold
}

// add adds n to shard's level in a fresh hint (none: nothing to do).
func (h *shardHints) add(key string, shard, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hint, ok := h.levels[key]
	if !ok || time.Since(hint.at) >= shardHintTTL || shard >= len(hint.sold) {
		return
	}
	sold := slices.Clone(hint.sold)
	sold[shard] += n
	h.levels[key] = shardHint{sold: sold, at: hint.at}
}

func (h *shardHints) put(key string, sold []int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.levels == nil || len(h.levels) >= 4096 {
		h.levels = map[string]shardHint{}
	}
	h.levels[key] = shardHint{sold: sold, at: time.Now()}
}

// planShards chooses each tier line's shards before the first attempt: one
// shard picked at random among those not lately seen full, so that
// concurrent orders spread out (a tier the hints show sold out is tried
// anyway: the transaction decides).
func (s *Orders) planShards(o *ticketing.Order, ev *ticketing.Event) error {
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
		start := ticketing.RandomShard(len(caps))
		takes, ok := ticketing.PlanTake(caps, s.shardHints.get(hintKey(o, l.TierID)), l.Quantity, start)
		if !ok {
			takes, ok = ticketing.PlanTake(caps, nil, l.Quantity, start)
		}
		if !ok {
			return &ticketing.StockError{Index: i}
		}
		l.Shards = takes
	}
	return nil
}

// replanLine plans line i again after shard refused it, from the shard
// after it: onto one shard with room, or over several when the stock is
// fragmented. It plans on the process's fresh hint (the refused shard
// counted as full for what it refused), else on a read of the tier's
// shards. A tier with fewer units left than the line wants is a *StockError.
func (s *Orders) replanLine(ctx context.Context, o *ticketing.Order, ev *ticketing.Event, i, refused int) error {
	l := &o.Lines[i]
	t, _ := ev.Tier(l.TierID)
	caps := ticketing.TierShardCaps(ev, t.Capacity)
	key, take := hintKey(o, l.TierID), l.Quantity
	for _, tk := range l.Takes() {
		if tk.Shard == refused {
			take = tk.Quantity
		}
	}
	sold := s.shardHints.refused(key, refused, caps[min(refused, len(caps)-1)], take)
	if sold == nil {
		var err error
		if sold, err = s.readShards(ctx, o, l.TierID, len(caps)); err != nil {
			return err
		}
		s.shardHints.put(key, sold)
	}
	takes, ok := ticketing.PlanTake(caps, sold, l.Quantity, refused+1)
	if !ok {
		return &ticketing.StockError{Index: i, KeyFree: true} // after a transaction that found the key free
	}
	l.Shards = takes
	return nil
}

// readShards reads the units sold of a tier's n shards (strongly consistent).
func (s *Orders) readShards(ctx context.Context, o *ticketing.Order, tierID string, n int) ([]int, error) {
	keys := make([]map[string]types.AttributeValue, n)
	shardOf := make(map[string]int, n)
	for i := range keys {
		keys[i] = shardKey(o, tierID, i)
		shardOf[stockShardPK(o.EventID, string(o.Environment), i)] = i
	}
	items, err := s.batchGet(ctx, "ReadShards", keys, true)
	if err != nil {
		return nil, fmt.Errorf("read stock shards of %s: %w", tierID, err)
	}
	sold := make([]int, n)
	for _, item := range items {
		var it stockItem
		if err := unmarshal(item, &it); err != nil {
			return nil, err
		}
		sold[shardOf[it.PK]] = it.Sold
	}
	return sold, nil
}

// queryStock runs the stock query of the event's first n shard partitions at
// once and hands each page's items to add, one at a time.
func (s *Catalog) queryStock(ctx context.Context, eventID string, env ticketing.Environment, occurrenceID string, n int, add func(shard int, items []map[string]types.AttributeValue) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs = make([]error, n)
	)
	for sh := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[sh] = s.queryStockPartition(ctx, stockShardPK(eventID, string(env), sh), occurrenceID, func(items []map[string]types.AttributeValue) error {
				mu.Lock()
				defer mu.Unlock()
				return add(sh, items)
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("read stock of %s: %w", eventID, err)
		}
	}
	return nil
}

func (s *Catalog) queryStockPartition(ctx context.Context, pk, occurrenceID string, add func([]map[string]types.AttributeValue) error) error {
	cond := "PK = :pk"
	vals := map[string]types.AttributeValue{":pk": str(pk)}
	if occurrenceID != "" {
		cond += " AND begins_with(SK, :occ)"
		vals[":occ"] = str(occurrenceID + "#")
	}
	var start map[string]types.AttributeValue
	for {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(s.table), KeyConditionExpression: aws.String(cond),
			ExpressionAttributeValues: vals, ExclusiveStartKey: start, ReturnConsumedCapacity: s.rcc(),
		})
		if err != nil {
			return err
		}
		s.record("GetStock", out.ConsumedCapacity)
		if err := add(out.Items); err != nil {
			return err
		}
		if out.LastEvaluatedKey == nil {
			return nil
		}
		start = out.LastEvaluatedKey
	}
}
