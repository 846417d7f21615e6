package store

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// OrderListShards is how many GSI1 partitions one organizer's orders in one
// environment are spread over (ORDERS#<org>#<env>#<0..127>, by a hash of the
// order id), so that an on-sale's order writes do not all land in one index
// partition. Listing reads every shard and merges. Changing it moves where new
// orders go and leaves old ones where they are: raise it only together with a
// reader that also reads the old shards (0..127 includes the 0..31 of the
// first layout).
//
// 128: each order writes its index entry about 8 WCU over its life (created
// with its payment, paid, refunded: the whole item is projected), so 5,000
// orders a second are ~40,000 WCU/s of this index; over 128 shards that is
// ~310 WCU/s a shard, a third of a partition's 1,000 (make onsale-model
// measured 32 shards at up to 220%). A listing page reads the 129 partitions
// in parallel: listings are the organizer's back office, not the buyers' path.
const OrderListShards = 128

// orderListShardPK is the index partition of an order.
func orderListShardPK(org, env, orderID string) string {
	return orderListPK(org, env) + "#" + strconv.FormatUint(uint64(shardOf(orderID, OrderListShards)), 10)
}

// orderListPartitions are the partitions a listing reads: every shard and the
// unsharded partition ORDERS#<org>#<env> that orders created before sharding
// were indexed under (they stay there: updates do not rewrite GSI1PK).
func orderListPartitions(org, env string) []string {
	pks := []string{orderListPK(org, env)}
	for i := range OrderListShards {
		pks = append(pks, orderListPK(org, env)+"#"+strconv.Itoa(i))
	}
	return pks
}

// orderShard is where a listing stands in one partition: the matching items
// read so far (newest first), whether the partition is exhausted and, when
// not, the sort key of the last item examined (everything at or above it in
// this partition has been examined).
type orderShard struct {
	in       dynamodb.QueryInput
	start    map[string]types.AttributeValue
	items    []map[string]types.AttributeValue
	done     bool
	frontier string
	examined int
}

// orderMerge reads the shards of one listing (every shard with the same key
// condition and filter) and merges them newest first.
type orderMerge struct {
	s      *Orders
	shards []*orderShard
	dropSK string // the cursor's own sort key, read by an inclusive bound and dropped
}

func (s *Orders) newOrderMerge(base *dynamodb.QueryInput, pkPlaceholder string, pks []string, dropSK string) *orderMerge {
	m := &orderMerge{s: s, dropSK: dropSK}
	for _, pk := range pks {
		sh := &orderShard{in: *base}
		sh.in.ExpressionAttributeValues = maps.Clone(base.ExpressionAttributeValues)
		sh.in.ExpressionAttributeValues[pkPlaceholder] = str(pk)
		m.shards = append(m.shards, sh)
	}
	return m
}

// fetch reads up to n more items from each of the given shards, in parallel.
func (m *orderMerge) fetch(ctx context.Context, shards []*orderShard, n int) error {
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	for i, sh := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.fetchOne(ctx, sh, n)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *orderMerge) fetchOne(ctx context.Context, sh *orderShard, n int) error {
	in := sh.in
	in.ExclusiveStartKey, in.Limit, in.ReturnConsumedCapacity = sh.start, aws.Int32(int32(n)), m.s.rcc()
	out, err := m.s.db.Query(ctx, &in)
	if err != nil {
		return err
	}
	m.s.record("ListOrders", out.ConsumedCapacity)
	sh.examined += int(out.ScannedCount)
	for _, it := range out.Items {
		if m.dropSK == "" || attrS(it, "GSI1SK") != m.dropSK {
			sh.items = append(sh.items, it)
		}
	}
	sh.start = out.LastEvaluatedKey
	sh.done = out.LastEvaluatedKey == nil
	if !sh.done {
		sh.frontier = attrS(out.LastEvaluatedKey, "GSI1SK")
	}
	return nil
}

// state is what the shards read so far settle: cut is the highest frontier of
// a shard not exhausted ("" when all are), above which every matching item is
// known; known are those items, newest first; examined counts every item read.
func (m *orderMerge) state() (known []map[string]types.AttributeValue, cut string, examined int) {
	open := false
	for _, sh := range m.shards {
		examined += sh.examined
		if !sh.done && (!open || sh.frontier > cut) {
			cut, open = sh.frontier, true
		}
	}
	for _, sh := range m.shards {
		for _, it := range sh.items {
			if !open || attrS(it, "GSI1SK") >= cut {
				known = append(known, it)
			}
		}
	}
	sortNewestFirst(known)
	return known, cut, examined
}

// behind are the open shards that may still hold one of the newest want items:
// those whose frontier is above the want-th newest item read so far (all open
// shards while fewer than want were read).
func (m *orderMerge) behind(want int) []*orderShard {
	var all []map[string]types.AttributeValue
	for _, sh := range m.shards {
		all = append(all, sh.items...)
	}
	sortNewestFirst(all)
	var out []*orderShard
	for _, sh := range m.shards {
		if !sh.done && (len(all) < want || sh.frontier > attrS(all[want-1], "GSI1SK")) {
			out = append(out, sh)
		}
	}
	return out
}

func sortNewestFirst(items []map[string]types.AttributeValue) {
	sort.Slice(items, func(a, b int) bool { return attrS(items[a], "GSI1SK") > attrS(items[b], "GSI1SK") })
}

// page merges the shards until it knows the newest limit+1 matching items, the
// shards are exhausted, or (with filters) it has examined about the list
// budget: a round reads every shard still behind, and a page without filters
// is never cut short. It returns up to limit items and the sort
// key the next page starts below ("" on the last page). The first round reads
// a few items per shard, each later round twice as many from the shards that
// may still hold one of the page's items, so a page costs a Query per shard
// and rarely more.
func (m *orderMerge) page(ctx context.Context, limit int, filtered bool) ([]map[string]types.AttributeValue, string, error) {
	want := limit + 1
	budget := max(m.s.budget(), want)
	per := want
	if filtered {
		per = ahead(want)
	}
	chunk := max(2, (per+len(m.shards)-1)/len(m.shards)+1)
	next := m.shards
	for {
		if err := m.fetch(ctx, next, chunk); err != nil {
			return nil, "", fmt.Errorf("list orders: %w", err)
		}
		known, cut, examined := m.state()
		switch {
		case len(known) > limit:
			return known[:limit], attrS(known[limit-1], "GSI1SK"), nil
		case cut == "":
			return known, "", nil
		case filtered && examined >= budget:
			return known, cut, nil
		}
		next, chunk = m.behind(want), min(2*chunk, 500)
	}
}
