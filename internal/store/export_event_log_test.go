package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// EventLogKeys reads an outbox event's event-log partition key, its expected
// value (from the id's shard) and its ttl.
func (s *Webhooks) EventLogKeys(ctx context.Context, id, org, env string) (got, want string, ttl int64, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: keyOf(outboxPK(id), skEvent)})
	if err != nil {
		return "", "", 0, err
	}
	ttl, _ = attrN(out.Item, "ttl")
	return attrS(out.Item, "GSI3PK"), eventLogPK(org, env, shardOf(id, listShards)), ttl, nil
}
