package store

import (
	"context"
	"fmt"
	"time"
	"tix/internal/ticketing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// maxBatchKeys is the most keys one BatchGetItem takes.
const maxBatchKeys = 100

// StockOf is GetStock of an event at hand: one Query of its stock partition
// (seats, shard 0 of every tier) and the other shards of its general-admission
// and standing tiers by key in one BatchGetItem, or, when there are more of
// them than one batch takes, one Query per shard partition.
func (s *Catalog) StockOf(ctx context.Context, e *ticketing.Event, env ticketing.Environment, occurrenceID string) (*ticketing.Stock, error) {
	st := newStock()
	add := stockAdder(st, e.ID)
	var keys []map[string]types.AttributeValue
	shardOf, most := map[string]int{}, 1
	occs := e.OccurrenceKeys()
	if occurrenceID != "" {
		occs = []string{occurrenceID}
	}
	for _, t := range e.Tiers {
		n := ticketing.TierStockShards(e, t.Capacity)
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
	if len(keys) > maxBatchKeys || e.SeatBlocks > 1 { // seats in blocks: every block's partition
		if err := s.queryStock(ctx, e.ID, env, occurrenceID, max(most, e.SeatBlocks), add); err != nil {
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

// batchGet reads items by key, maxBatchKeys a request (the most
// BatchGetItem takes), retrying unprocessed keys (with a short backoff, a
// few times).
func (s *core) batchGet(ctx context.Context, op string, keys []map[string]types.AttributeValue, consistent bool) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	for len(keys) > maxBatchKeys {
		got, err := s.batchGet(ctx, op, keys[:maxBatchKeys], consistent)
		if err != nil {
			return nil, err
		}
		items, keys = append(items, got...), keys[maxBatchKeys:]
	}
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
