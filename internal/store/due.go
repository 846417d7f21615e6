package store

import (
	"context"
	"fmt"
	"hash/fnv"
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
const timerShards = 8

func dueKey(t ticketing.Timer) map[string]types.AttributeValue {
	h := fnv.New32a()
	h.Write([]byte(t.OrderID))
	return keyOf("DUE#"+strconv.Itoa(int(h.Sum32()%timerShards)), dueID(t))
}

// dueID is a marker's sort key, which alone tells markers apart (the
// partition follows from the order id in it).
func dueID(t ticketing.Timer) string { return orderSortKey(t.Due, t.OrderID) + "#" + t.Kind }

func duePut(s *Store, t ticketing.Timer) types.TransactWriteItem {
	item := dueKey(t)
	item["kind"] = str(t.Kind)
	item["oid"] = str(t.OrderID)
	item["ttl"] = num(strconv.FormatInt(t.Due.Add(7*24*time.Hour).Unix(), 10))
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: item}}
}

func dueDelete(s *Store, t ticketing.Timer) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: dueKey(t)}}
}

// DueTimers returns up to limit timers whose marker is due at or before now
// (the sweep's safety net for timers whose queue message was lost), oldest
// first within each shard.
func (s *Store) DueTimers(ctx context.Context, now time.Time, limit int) ([]ticketing.Timer, error) {
	var out []ticketing.Timer
	for shard := range timerShards {
		if len(out) >= limit {
			break
		}
		e := newExprs()
		res, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(s.table),
			KeyConditionExpression: aws.String(e.n("PK") + " = " + e.s("DUE#"+strconv.Itoa(shard)) +
				" AND " + e.n("SK") + " <= " + e.s(orderSortKey(now, "~"))),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
			Limit: aws.Int32(int32(limit - len(out))), ReturnConsumedCapacity: s.rcc(),
		})
		if err != nil {
			return nil, fmt.Errorf("query due timers: %w", err)
		}
		s.record("DueTimers", res.ConsumedCapacity)
		for _, it := range res.Items {
			if t, ok := dueFrom(it); ok {
				out = append(out, t)
			}
		}
	}
	return out, nil
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
