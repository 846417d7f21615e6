package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A write-sharded index partition (one per organizer, say) is read by querying
// every shard backwards and merging them, newest first. Every shard of one
// listing shares one sort-key space whose values are unique (<time>#<id>), so a
// page is resumed below the last sort key it returned: the cursor holds that
// sort key alone, whatever the shard count (and the cursors of the unsharded
// listing, which hold the index's sort key too, still work).

// mergeQuery is one newest-first listing over the partitions pks of index.
type mergeQuery struct {
	op, index string
	pks       []string
	// below is the sort key to resume below ("" from the newest).
	below string
	// above is the lowest sort key to read, inclusive ("" for none).
	above string
	// filter with its names and values (#f... and :f..., never #mpk, #msk, :mpk, :mbelow).
	filter string
	names  map[string]string
	vals   map[string]types.AttributeValue
	limit  int
}

// mergeShard is one partition's progress: where its next Query starts and
// the sort key down to which it was read (front; "" once it is read to its end).
type mergeShard struct {
	start map[string]types.AttributeValue
	front string
	done  bool
	items []map[string]types.AttributeValue
}

// mergeNewest returns up to limit items newest first and the sort key to
// resume below ("" when nothing follows). It reads a few items of every shard
// at once, then, until it knows limit+1 items (or everything, or it examined
// the list budget), reads on in the shard read least far. Items sorting at or
// above the shards' highest front are known to be complete; a page ended by
// the budget is short (maybe empty) and resumes below that front. A page
// examines at most the budget or one item per partition, whichever is more.
func (s *Webhooks) mergeNewest(ctx context.Context, q mergeQuery) ([]map[string]types.AttributeValue, string, error) {
	skName := q.index + "SK"
	readAhead := exact
	if q.filter != "" {
		readAhead = ahead
	}
	want := q.limit + 1
	shards := make([]mergeShard, len(q.pks))
	// The first round reads every partition: a few items each, within the
	// list budget when it allows one item per partition.
	first := max(1, min((readAhead(want)+len(q.pks)-1)/len(q.pks)+1, s.budget()/len(q.pks)))
	scanned := make([]int, len(q.pks))
	errs := make([]error, len(q.pks))
	var wg sync.WaitGroup
	for i := range q.pks {
		wg.Go(func() { scanned[i], errs[i] = s.mergeRead(ctx, q, i, &shards[i], first) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	examined, budget := 0, max(s.budget(), want)
	for _, n := range scanned {
		examined += n
	}
	for {
		front, at := "", -1
		for i, sh := range shards {
			if !sh.done && sh.front > front {
				front, at = sh.front, i
			}
		}
		known := known(shards, skName, front)
		if len(known) > q.limit {
			sortNewest(known, skName)
			return known[:q.limit], attrS(known[q.limit-1], skName), nil
		}
		if at < 0 || examined >= budget {
			sortNewest(known, skName)
			return known, front, nil
		}
		n, err := s.mergeRead(ctx, q, at, &shards[at], max(1, min(readAhead(want-len(known)), budget-examined)))
		if err != nil {
			return nil, "", err
		}
		examined += n
	}
}

// known are the items read that sort at or above front (all when front is "").
func known(shards []mergeShard, skName, front string) []map[string]types.AttributeValue {
	var out []map[string]types.AttributeValue
	for _, sh := range shards {
		for _, it := range sh.items {
			if attrS(it, skName) >= front {
				out = append(out, it)
			}
		}
	}
	return out
}

func sortNewest(items []map[string]types.AttributeValue, skName string) {
	sort.Slice(items, func(a, b int) bool { return attrS(items[a], skName) > attrS(items[b], skName) })
}

// mergeRead queries shard i backwards for up to limit items (below q.below)
// and returns how many it examined.
func (s *Webhooks) mergeRead(ctx context.Context, q mergeQuery, i int, sh *mergeShard, limit int) (int, error) {
	names := maps.Clone(q.names)
	vals := maps.Clone(q.vals)
	if names == nil {
		names = map[string]string{}
	}
	if vals == nil {
		vals = map[string]types.AttributeValue{}
	}
	names["#mpk"], vals[":mpk"] = q.index+"PK", str(q.pks[i])
	cond := "#mpk = :mpk"
	switch {
	case q.below != "" && q.above != "":
		// BETWEEN is inclusive: the item at below (the previous page's last) is dropped.
		names["#msk"], vals[":mbelow"], vals[":mabove"] = q.index+"SK", str(q.below), str(q.above)
		cond += " AND #msk BETWEEN :mabove AND :mbelow"
	case q.below != "":
		names["#msk"], vals[":mbelow"] = q.index+"SK", str(q.below)
		cond += " AND #msk < :mbelow"
	case q.above != "":
		names["#msk"], vals[":mabove"] = q.index+"SK", str(q.above)
		cond += " AND #msk >= :mabove"
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(q.index),
		KeyConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
		ScanIndexForward: aws.Bool(false), ExclusiveStartKey: sh.start, Limit: aws.Int32(int32(limit)),
		ReturnConsumedCapacity: s.rcc(),
	}
	if q.filter != "" {
		in.FilterExpression = aws.String(q.filter)
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return 0, fmt.Errorf("%s: query %s: %w", q.op, q.pks[i], err)
	}
	s.record(q.op, out.ConsumedCapacity)
	for _, it := range out.Items {
		if q.below == "" || attrS(it, q.index+"SK") != q.below {
			sh.items = append(sh.items, it)
		}
	}
	sh.start = out.LastEvaluatedKey
	if out.LastEvaluatedKey == nil {
		sh.done, sh.front = true, ""
	} else {
		sh.front = attrS(out.LastEvaluatedKey, q.index+"SK")
	}
	return int(out.ScannedCount), nil
}

// mergeCursor signs the sort key to resume below ("" gives "").
func (s *Webhooks) mergeCursor(index, below, fingerprint string) string {
	if below == "" {
		return ""
	}
	return s.cursor.encode(map[string]types.AttributeValue{index + "SK": str(below)}, fingerprint)
}

// mergeBelow reads a cursor back into the sort key to resume below.
func (s *Webhooks) mergeBelow(cursor, index, fingerprint string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	key, err := s.cursor.decode(cursor, fingerprint)
	if err != nil {
		return "", err
	}
	sk := attrS(key, index+"SK")
	if sk == "" {
		return "", invalidCursor()
	}
	return sk, nil
}
