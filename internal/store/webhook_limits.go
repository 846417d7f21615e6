package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Outbound rate windows: one item per key and second that counts the
// webhook POSTs taken from it.

// TakeOutbound counts one request in key's one-second window item
// (ADD n 1, conditional on n < limit); a full window is (false, nil).
func (s *Store) TakeOutbound(ctx context.Context, key string, limit int, now time.Time) (bool, error) {
	if limit <= 0 {
		return false, nil
	}
	x := newExprs()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(outboundPK(key, now.Unix()), skOutbound),
		UpdateExpression: aws.String("SET " + x.n("ttl") + " = " + x.d(now.Add(outboundKeep).Unix()) +
			" ADD " + x.n("n") + " " + x.d(1)),
		ConditionExpression:      aws.String("attribute_not_exists(" + x.n("n") + ") OR " + x.n("n") + " < " + x.d(int64(limit))),
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
