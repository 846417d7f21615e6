package store

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// A due-timer marker is a small item per timer-driven transition an order
// waits for (its expiry while pending, the settlement of its refund), keyed by
// the time it is due. It is written in the transaction that starts the wait and
// deleted in the one that ends it, so it exists exactly while the transition
// is owed, whether or not the timer's queue message was sent. The sweep queries
// the markers that are due: the safety net for lost timers, without an index on
// the order item.
//
// Every order writes its expiry marker in its creation transaction and deletes
// it in the one that pays it: 4 WCU (transactional) per order on its shard. At
// 5,000 orders/s 64 shards take about 310 WCU/s each (8 took 2,500).
const timerShards = 64

// legacyTimerShards is the former shard count: markers written under it sit in
// DUE#0..7, which the sweep still reads (they are among the 64), but the
// transactions that end a wait now delete the 64-shard key. DueTimers hands
// such a marker out once and deletes it.
const legacyTimerShards = 8

func dueShardPK(shard uint32) string { return "DUE#" + strconv.Itoa(int(shard)) }

func dueKey(t ticketing.Timer) map[string]types.AttributeValue {
	return keyOf(dueShardPK(shardOf(t.OrderID, timerShards)), dueID(t))
}

// dueID is a marker's sort key, which alone tells markers apart (the
// partition follows from the order id in it).
func dueID(t ticketing.Timer) string { return orderSortKey(t.Due, t.OrderID) + "#" + t.Kind }

func duePut(s *core, t ticketing.Timer) types.TransactWriteItem {
	item := dueKey(t)
	item["kind"] = str(t.Kind)
	item["oid"] = str(t.OrderID)
	item["ttl"] = num(strconv.FormatInt(t.Due.Add(7*24*time.Hour).Unix(), 10))
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: item}}
}

func dueDelete(s *core, t ticketing.Timer) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: dueKey(t)}}
}

// DueTimers returns up to limit timers whose marker is due at or before now
// (the sweep's safety net for timers whose queue message was lost), oldest
// first: every shard is queried at once and the results merged. A marker found
// in a legacy shard that its 64-shard key does not name (written under 8
// shards) is returned and then deleted, since nothing else would delete it.
func (s *Due) DueTimers(ctx context.Context, now time.Time, limit int) ([]ticketing.Timer, error) {
	if limit <= 0 {
		return nil, nil
	}
	items, err := s.shardQuery(ctx, "DueTimers", "", timerShards,
		func(i int) string { return dueShardPK(uint32(i)) }, "<=", orderSortKey(now, "~"), limit, nil)
	if err != nil {
		return nil, fmt.Errorf("query due timers: %w", err)
	}
	sort.SliceStable(items, func(a, b int) bool { return attrS(items[a], "SK") < attrS(items[b], "SK") })
	var out []ticketing.Timer
	for _, it := range items {
		if len(out) == limit {
			break
		}
		t, ok := dueFrom(it)
		if !ok {
			continue
		}
		out = append(out, t)
		if pk := attrS(it, "PK"); pk != attrS(dueKey(t), "PK") {
			if err := s.dropMarker(ctx, pk, attrS(it, "SK")); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// dropMarker deletes a marker written under the legacy shard count.
func (s *Due) dropMarker(ctx context.Context, pk, sk string) error {
	out, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: keyOf(pk, sk), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return fmt.Errorf("delete legacy due marker %s %s: %w", pk, sk, err)
	}
	s.record("DueTimers", out.ConsumedCapacity)
	return nil
}

// dueFrom reads a marker back: the due time is the sort key's first part.
func dueFrom(it map[string]types.AttributeValue) (ticketing.Timer, bool) {
	kind, _ := it["kind"].(*types.AttributeValueMemberS)
	oid, _ := it["oid"].(*types.AttributeValueMemberS)
	sk, _ := it["SK"].(*types.AttributeValueMemberS)
	if kind == nil || oid == nil || sk == nil {
		return ticketing.Timer{}, false
	}
	at, _, _ := strings.Cut(sk.Value, "#")
	due, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return ticketing.Timer{}, false
	}
	return ticketing.Timer{Kind: kind.Value, OrderID: oid.Value, Due: due}, true
}
