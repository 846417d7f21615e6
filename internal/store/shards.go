package store

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// shardQuery reads a sharded, sparse index (or the table, index ""): the
// partitions pk(0..shards-1) of index with the key condition "sort key <skCond>
// skVal", in parallel, each up to perShard items that keep accepts (nil keeps all).
func (s *core) shardQuery(ctx context.Context, op, index string, shards int, pk func(int) string, skCond, skVal string,
	perShard int, keep func(map[string]types.AttributeValue) bool) ([]map[string]types.AttributeValue, error) {
	results := make([][]map[string]types.AttributeValue, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for i := range shards {
		wg.Go(func() {
			var start map[string]types.AttributeValue
			for {
				in := &dynamodb.QueryInput{
					TableName:              aws.String(s.table),
					KeyConditionExpression: aws.String("#pk = :pk AND #sk " + skCond + " :sk"),
					ExpressionAttributeNames: map[string]string{
						"#pk": index + "PK", "#sk": index + "SK",
					},
					ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk(i)), ":sk": str(skVal)},
					ExclusiveStartKey:         start, Limit: aws.Int32(int32(min(perShard+1, 1000))),
					ReturnConsumedCapacity: s.rcc(),
				}
				if index != "" {
					in.IndexName = aws.String(index)
				}
				out, err := s.db.Query(ctx, in)
				if err != nil {
					errs[i] = fmt.Errorf("%s: query %s: %w", op, pk(i), err)
					return
				}
				s.record(op, out.ConsumedCapacity)
				for _, it := range out.Items {
					if keep == nil || keep(it) {
						results[i] = append(results[i], it)
					}
				}
				if len(results[i]) >= perShard || out.LastEvaluatedKey == nil {
					return
				}
				start = out.LastEvaluatedKey
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var all []map[string]types.AttributeValue
	for _, r := range results {
		all = append(all, r...)
	}
	return all, nil
}
