package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Outbound rate windows: a key's one-second budget (a receiving host's, or
// the global one) is split over shard items, one per key, second and shard,
// that count the webhook POSTs taken from them. One item per key and second
// took every attempt of an on-sale (5,000/s on one item); shards spread them.
//
//   - Shards: ceil(limit / outboundShareTarget), at most outboundShards (64),
//     at least 1. Shard i allows limit/n per second, the first limit mod n
//     one more: the shares sum to the limit, so however many instances take
//     at once, no more than limit requests go out in one second (as before).
//   - An attempt takes from a shard chosen at random; when that shard is full
//     it tries the next ones, up to outboundTries shards in all. It is refused
//     when all it tried are full. So it may be refused while another shard has
//     room: the tolerance is on the low side only, at most outboundTries-1
//     writes more per refused attempt, and vanishes once demand is well above
//     or below the limit (measured in the tests: 200 attempts at once through a
//     limit of 64 over 8 shards take at least 48).
//   - A process remembers the shards it found full in the current second and
//     writes to them no more that second: the refused conditional writes on a
//     shard item are at most one per process and second, so a shard takes
//     about limit/n + instances writes a second whatever the demand.
const (
	outboundShards      = 64
	outboundShareTarget = 8
	outboundTries       = 3
)

func outboundShardCount(limit int) int {
	return min(max((limit+outboundShareTarget-1)/outboundShareTarget, 1), outboundShards)
}

// outboundShare is shard i's part of limit over n shards.
func outboundShare(limit, n, i int) int {
	q := limit / n
	if i < limit%n {
		q++
	}
	return q
}

// fullShards is the set of (key, shard) windows of one second found full.
type fullShards struct {
	mu   sync.Mutex
	sec  int64
	full map[string]bool
}

func (f *fullShards) has(sec int64, key string, shard int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sec == sec && f.full[key+"#"+strconv.Itoa(shard)]
}

func (f *fullShards) mark(sec int64, key string, shard int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sec > f.sec {
		f.sec, f.full = sec, map[string]bool{}
	}
	if sec == f.sec {
		f.full[key+"#"+strconv.Itoa(shard)] = true
	}
}

// TakeOutbound takes one request from key's one-second budget of limit: from
// a shard at random, or the next ones when it is full (see above); a full
// window is (false, nil).
func (s *Webhooks) TakeOutbound(ctx context.Context, key string, limit int, now time.Time) (bool, error) {
	if limit <= 0 {
		return false, nil
	}
	n, sec := outboundShardCount(limit), now.Unix()
	first := rand.N(n)
	for try, i := 0, 0; try < outboundTries && i < n; i++ {
		shard := (first + i) % n
		if s.full.has(sec, key, shard) {
			continue
		}
		try++
		ok, err := s.takeShard(ctx, key, sec, shard, outboundShare(limit, n, shard), now)
		if err != nil || ok {
			return ok, err
		}
		s.full.mark(sec, key, shard)
	}
	return false, nil
}

// takeShard counts one request in a shard's window item (ADD n 1,
// conditional on n < share); a full shard is (false, nil).
func (s *Webhooks) takeShard(ctx context.Context, key string, sec int64, shard, share int, now time.Time) (bool, error) {
	x := newExprs()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(outboundPK(key, sec, shard), skOutbound),
		UpdateExpression: aws.String("SET " + x.n("ttl") + " = " + x.d(now.Add(outboundKeep).Unix()) +
			" ADD " + x.n("n") + " " + x.d(1)),
		ConditionExpression:      aws.String("attribute_not_exists(" + x.n("n") + ") OR " + x.n("n") + " < " + x.d(int64(share))),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("take outbound request for %s: %w", key, err)
	}
	s.record("TakeOutbound", out.ConsumedCapacity)
	return true, nil
}
