package store

import (
	"hash/fnv"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/webhook"
)

// Webhook persistence (the webhook.Store port): endpoints with their health
// counters and a per-environment endpoint counter, deliveries kept beside their
// outbox event (OEVT#<evt>, SK WHD#<endpoint>), the dispatch transaction, the
// sparse due index the sweep reads, and the outbound rate windows. internal/store/README.md
// lists the access patterns. By topic: webhook_endpoints.go, webhook_outbox.go
// (fan-out), webhook_deliveries.go, webhook_limits.go; this file holds what
// they share.

var (
	_ webhook.Store           = (*Webhooks)(nil)
	_ webhook.EndpointStore   = (*Webhooks)(nil)
	_ webhook.OutboxStore     = (*Webhooks)(nil)
	_ webhook.DeliveryStore   = (*Webhooks)(nil)
	_ webhook.OutboundLimiter = (*Webhooks)(nil)
)

const (
	// dueShards spreads the pending deliveries' due index over partitions:
	// about 3 WCU of due-index entries per delivery (written pending, replaced
	// when delivered), so at 5,000 deliveries/s a shard takes about 235 WCU/s.
	// Entries of the former 8 shards (WHDUE#0..7) are among these; a delivery
	// moves to its 64-shard entry when it is next saved.
	dueShards = 64
	// deliveryRetention is when DynamoDB TTL may delete a delivery (housekeeping).
	deliveryRetention = 90 * 24 * time.Hour
	// outboundKeep is when TTL may delete a one-second outbound rate window.
	outboundKeep = 5 * time.Minute
	// maxDispatch: TransactWriteItems takes 100 items, one of them the event.
	maxDispatch = 99
	// batchGetTries bounds the retries of UnprocessedKeys.
	batchGetTries = 6
)

// Attribute helpers.

func attrS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func attrN(item map[string]types.AttributeValue, name string) (int64, bool) {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	return n, err == nil
}

// attrMS reads a Unix-milliseconds attribute as a time; nil when absent.
func attrMS(item map[string]types.AttributeValue, name string) *time.Time {
	n, ok := attrN(item, name)
	if !ok {
		return nil
	}
	t := time.UnixMilli(n).UTC()
	return &t
}

func msAV(t time.Time) types.AttributeValue { return num(strconv.FormatInt(t.UnixMilli(), 10)) }

func shardOf(id string, shards uint32) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32() % shards
}
