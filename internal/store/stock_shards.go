package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"

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

// planShards chooses each tier line's shards before the first attempt: one
// shard picked at random, so that concurrent orders spread out.
func planShards(o *ticketing.Order, ev *ticketing.Event) error {
	for i := range o.Lines {
		l := &o.Lines[i]
		if l.Seated {
			continue
		}
		t, ok := ev.Tier(l.TierID)
		if !ok || t.Capacity < l.Quantity {
			return &ticketing.StockError{Index: i}
		}
		takes, ok := ticketing.PlanTake(ticketing.ShardCaps(t.Capacity), nil, l.Quantity, ticketing.RandomShard(t.Capacity))
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
	takes, ok := ticketing.PlanTake(caps, sold, l.Quantity, refused+1)
	if !ok {
		return &ticketing.StockError{Index: i}
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
	sold := make([]int, n)
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for len(req) > 0 {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req, ReturnConsumedCapacity: s.rcc()})
		if err != nil {
			return nil, fmt.Errorf("read stock shards of %s: %w", tierID, err)
		}
		for _, c := range out.ConsumedCapacity {
			s.record("ReadShards", &c)
		}
		for _, item := range out.Responses[s.table] {
			var it stockItem
			if err := unmarshal(item, &it); err != nil {
				return nil, err
			}
			sold[shardOf[it.PK]] = it.Sold
		}
		req = out.UnprocessedKeys
	}
	return sold, nil
}

// queryStock runs the stock query of every shard partition of an event at
// once and hands each page's items to add.
func (s *Store) queryStock(ctx context.Context, eventID string, env ticketing.Environment, occurrenceID string, add func(shard int, items []map[string]types.AttributeValue) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs = make([]error, ticketing.MaxStockShards)
	)
	for sh := range ticketing.MaxStockShards {
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
