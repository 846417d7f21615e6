package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A key's client IPs per UTC day (the distinct-IP alert): one item per (key,
// day, IP) in the partition KEYIP#<key>#<day>, its sort key a hash of the IP
// (the table keeps no address), written if absent; a new one is followed by
// a count of the partition. No item is written per request, and none is
// shared by requests from different IPs. TTL removes them after two days.
func keyIPPK(keyID, day string) string { return "KEYIP#" + keyID + "#" + day }

// SeenKeyIP implements email.KeyIPStore.
func (s *Keys) SeenKeyIP(ctx context.Context, keyID, day, ip string, limit int) (bool, int, error) {
	sum := sha256.Sum256([]byte(ip))
	item := keyOf(keyIPPK(keyID, day), hex.EncodeToString(sum[:16]))
	item["ttl"] = num(strconv.FormatInt(s.clock.Now().Add(48*time.Hour).Unix(), 10))
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if _, ok := isConditionFailed(err); ok {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("record a key's client IP: %w", err)
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), KeyConditionExpression: aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(keyIPPK(keyID, day))},
		Select:                    types.SelectCount, Limit: aws.Int32(int32(limit)),
	})
	if err != nil {
		return true, 0, fmt.Errorf("count a key's client IPs: %w", err)
	}
	return true, int(out.Count), nil
}
