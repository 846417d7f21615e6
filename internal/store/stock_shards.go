package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// Stock shards of general-admission and standing tiers (ticketing.ShardCaps):
// shard 0 is the tier's counter in the event's stock partition, the item a
// tier had before stock was sharded, so existing counters and orders need no
// migration; shard k > 0 lives in a partition of its own, shared by the
// event's tiers and occurrences, so that an on-sale's writes spread over
// MaxStockShards partitions.
func stockShardPK(event, env string, shard int) string {
	if shard == 0 {
		return stockPK(event, env)
	}
	return stockPK(event, env) + "#" + strconv.Itoa(shard)
}

func (s *Store) shardKey(o *ticketing.Order, tierID string, shard int) map[string]types.AttributeValue {
	return keyOf(stockShardPK(o.EventID, string(o.Environment), shard), stockTierSK(occKey(o), tierID))
}

// shardTake adds qty to a shard's units sold, never past its cap.
func (s *Store) shardTake(o *ticketing.Order, tierID string, t ticketing.ShardTake, shardCap int) *types.Update {
	e := newExprs()
	return &types.Update{
		TableName: aws.String(s.table), Key: s.shardKey(o, tierID, t.Shard),
		UpdateExpression: aws.String("ADD " + e.n("sold") + " " + e.d(int64(t.Quantity))),
		ConditionExpression: aws.String("(attribute_not_exists(" + e.n("sold") + ") AND " + e.d(int64(t.Quantity)) + " <= " + e.d(int64(shardCap)) +
			") OR " + e.n("sold") + " <= " + e.d(int64(shardCap-t.Quantity))),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}

// lineGiveBack returns what a tier line took to the shards it took it from.
func (s *Store) lineGiveBack(o *ticketing.Order, l ticketing.OrderLine) []types.TransactWriteItem {
	var items []types.TransactWriteItem
	for _, t := range l.Takes() {
		e := newExprs()
		items = append(items, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: s.shardKey(o, l.TierID, t.Shard),
			UpdateExpression:         aws.String("ADD " + e.n("sold") + " " + e.d(int64(-t.Quantity))),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		}})
	}
	return items
}

// shardHintTTL is how long the shard levels of a tier read after a refusal
// steer the process's next orders of that tier away from full shards.
const shardHintTTL = time.Second

// shardHints remember, per tier, the shard levels read last. They only choose
// which shard an order tries first: the transaction's conditions decide, and
// a tier the hints show sold out is tried anyway.
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
// concurrent orders spread out.
func (s *Store) planShards(o *ticketing.Order, ev *ticketing.Event) error {
	for i := range o.Lines {
		l := &o.Lines[i]
		if l.Seated {
			continue
		}
		t, ok := ev.Tier(l.TierID)
		if !ok || t.Capacity < l.Quantity {
			return &ticketing.StockError{Index: i}
		}
		caps, start := ticketing.ShardCaps(t.Capacity), ticketing.RandomShard(t.Capacity)
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

// replanLine reads the shards of line i's tier after one of them refused it,
// and plans the line again from the shard after the one that refused: onto
// one shard with room, or over several when the stock is fragmented. A tier
// with fewer units left than the line wants is a *StockError.
func (s *Store) replanLine(ctx context.Context, o *ticketing.Order, ev *ticketing.Event, i, refused int) error {
	l := &o.Lines[i]
	t, _ := ev.Tier(l.TierID)
	caps := ticketing.ShardCaps(t.Capacity)
	sold, err := s.readShards(ctx, o, l.TierID, len(caps))
	if err != nil {
		return err
	}
	s.shardHints.put(hintKey(o, l.TierID), sold)
	takes, ok := ticketing.PlanTake(caps, sold, l.Quantity, refused+1)
	if !ok {
		return &ticketing.StockError{Index: i, KeyFree: true} // after a transaction that found the key free
	}
	l.Shards = takes
	return nil
}

// readShards reads the units sold of a tier's n shards (strongly consistent).
func (s *Store) readShards(ctx context.Context, o *ticketing.Order, tierID string, n int) ([]int, error) {
	keys := make([]map[string]types.AttributeValue, n)
	shardOf := make(map[string]int, n)
	for i := range keys {
		keys[i] = s.shardKey(o, tierID, i)
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
func (s *Store) queryStock(ctx context.Context, eventID string, env ticketing.Environment, occurrenceID string, n int, add func(shard int, items []map[string]types.AttributeValue) error) error {
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

func (s *Store) queryStockPartition(ctx context.Context, pk, occurrenceID string, add func([]map[string]types.AttributeValue) error) error {
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

// maxBatchKeys is the most keys one BatchGetItem takes.
const maxBatchKeys = 100

// StockOf is GetStock of an event at hand: one Query of its stock partition
// (seats, shard 0 of every tier) and the other shards of its general-admission
// and standing tiers by key in one BatchGetItem, or, when there are more of
// them than one batch takes, one Query per shard partition.
func (s *Store) StockOf(ctx context.Context, e *ticketing.Event, env ticketing.Environment, occurrenceID string) (*ticketing.Stock, error) {
	st := newStock()
	add := stockAdder(st, e.ID)
	var keys []map[string]types.AttributeValue
	shardOf, most := map[string]int{}, 1
	occs := e.OccurrenceKeys()
	if occurrenceID != "" {
		occs = []string{occurrenceID}
	}
	for _, t := range e.Tiers {
		n := ticketing.StockShards(t.Capacity)
		if t.Seated || n < 2 {
			continue
		}
		most = max(most, n)
		for _, occ := range occs {
			for sh := 1; sh < n; sh++ {
				pk := stockShardPK(e.ID, string(env), sh)
				shardOf[pk] = sh
				keys = append(keys, keyOf(pk, stockTierSK(occ, t.ID)))
			}
		}
	}
	if len(keys) > maxBatchKeys {
		if err := s.queryStock(ctx, e.ID, env, occurrenceID, most, add); err != nil {
			return nil, err
		}
		return st, nil
	}
	err := s.queryStockPartition(ctx, stockShardPK(e.ID, string(env), 0), occurrenceID, func(items []map[string]types.AttributeValue) error {
		return add(0, items)
	})
	if err != nil {
		return nil, fmt.Errorf("read stock of %s: %w", e.ID, err)
	}
	if len(keys) == 0 {
		return st, nil
	}
	items, err := s.batchGet(ctx, "GetStock", keys, false)
	if err != nil {
		return nil, fmt.Errorf("read stock shards of %s: %w", e.ID, err)
	}
	for _, item := range items {
		pk, _ := item["PK"].(*types.AttributeValueMemberS)
		if pk == nil {
			continue
		}
		if err := add(shardOf[pk.Value], []map[string]types.AttributeValue{item}); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// batchGet reads up to maxBatchKeys items by key, retrying unprocessed keys
// (with a short backoff, a few times).
func (s *Store) batchGet(ctx context.Context, op string, keys []map[string]types.AttributeValue, consistent bool) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(consistent)}}
	for attempt := 0; ; attempt++ {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req, ReturnConsumedCapacity: s.rcc()})
		if err != nil {
			return nil, err
		}
		for _, c := range out.ConsumedCapacity {
			s.record(op, &c)
		}
		items = append(items, out.Responses[s.table]...)
		left := out.UnprocessedKeys[s.table]
		if len(left.Keys) == 0 {
			return items, nil
		}
		if attempt >= 8 {
			return nil, fmt.Errorf("%d keys still unprocessed after %d attempts", len(left.Keys), attempt+1)
		}
		req = map[string]types.KeysAndAttributes{s.table: left}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(5<<attempt) * time.Millisecond):
		}
	}
}
