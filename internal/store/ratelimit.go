package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// RateCounterPK is the partition key of a rate-limit counter item: the
// request budgets of the API keys are counted on these, never on a key's item.
func RateCounterPK(counter string) string { return RateLimitKeyPrefix + counter }

// rateCounterTTL keeps a spent window's counter an hour past its end (TTL
// deletes it later, for free).
const rateCounterTTL = time.Hour

// CountRequest counts one request on the counter item of counter (a budget's
// window, shard or client: the caller names it) if fewer than limit were
// counted on it: one conditional UpdateItem (ADD n 1), so every function
// instance shares the count and the item never holds more than limit. used is
// the count after this request when admitted. Nothing but the counter item is
// read or written; the item expires (ttl) an hour after until.
func (s *Keys) CountRequest(ctx context.Context, counter string, limit int, until time.Time) (used int, admitted bool, err error) {
	e := newExprs()
	n := e.n("n")
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(RateCounterPK(counter), skRateCounter),
		UpdateExpression: aws.String("ADD " + n + " " + e.d(1) + " SET " + e.n("ttl") + " = " +
			e.v(num(strconv.FormatInt(until.Add(rateCounterTTL).Unix(), 10)))),
		ConditionExpression:      aws.String("attribute_not_exists(" + n + ") OR " + n + " < " + e.d(int64(limit))),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		ReturnValues: types.ReturnValueUpdatedNew, ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return limit, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("count request: %w", err)
	}
	s.record("CountRequest", out.ConsumedCapacity)
	if v, ok := out.Attributes["n"].(*types.AttributeValueMemberN); ok {
		used, _ = strconv.Atoi(v.Value)
	}
	return used, true, nil
}
