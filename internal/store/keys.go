package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// keyItem is an API key, addressed by the hash of its secret. Requests only read
// it (through each process's key cache): their rate-limit budgets are counted on
// counter items of their own (ratelimit.go), so no request writes a key item.
// keyRefItem (by key id, indexed for listing) holds a copy of the key for the
// operator's list, revoke and budget changes.
type keyItem struct {
	PK, SK string
	Hash   string `json:"hash"`
	auth.Key
}

type keyRefItem struct {
	PK, SK, GSI1PK, GSI1SK string
	Hash                   string `json:"hash"`
	auth.Key
}

// CreateKey stores a key by the hash of its secret; the secret itself is never stored.
func (s *Keys) CreateKey(ctx context.Context, k auth.Key, hash string) error {
	item, err := marshal(keyItem{PK: keyPK(hash), SK: skKey, Hash: hash, Key: k})
	if err != nil {
		return fmt.Errorf("marshal key %s: %w", k.ID, err)
	}
	ref, err := marshal(keyRefItem{PK: keyIDPK(k.ID), SK: skKey,
		GSI1PK: keyListPK(k.OrganizerID), GSI1SK: sortTime(k.CreatedAt) + "#" + k.ID, Hash: hash, Key: k})
	if err != nil {
		return fmt.Errorf("marshal key %s: %w", k.ID, err)
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: ref, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
	}})
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		return ticketing.Errorf(ticketing.CodeConflict, "key %s already exists", k.ID)
	}
	if err != nil {
		return fmt.Errorf("put key %s: %w", k.ID, err)
	}
	return nil
}

// ListKeys returns an organizer's keys, oldest first.
func (s *Keys) ListKeys(ctx context.Context, organizerID string) ([]auth.Key, error) {
	var res []auth.Key
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s2(keyListPK(organizerID))},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list keys of %s: %w", organizerID, err)
		}
		for _, item := range page.Items {
			var it keyRefItem
			if err := unmarshal(item, &it); err != nil {
				return nil, fmt.Errorf("decode key: %w", err)
			}
			res = append(res, it.Key)
		}
	}
	return res, nil
}

// RevokeKey marks a key revoked by its public id; processes that cached the key
// stop accepting it within their key cache's lifetime (TIX_KEY_CACHE_TTL).
// Revoking a revoked key keeps the first revocation time.
func (s *Keys) RevokeKey(ctx context.Context, keyID string, at time.Time) (*auth.Key, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(keyIDPK(keyID), skKey), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("find key %s: %w", keyID, err)
	}
	if out.Item == nil {
		return nil, ticketing.NotFound("key " + keyID)
	}
	var it keyRefItem
	if err := unmarshal(out.Item, &it); err != nil {
		return nil, fmt.Errorf("decode key %s: %w", keyID, err)
	}
	if it.RevokedAt != nil {
		return &it.Key, nil
	}
	t := at.UTC()
	revoke := func(pk string) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: keyOf(pk, skKey),
			UpdateExpression:          aws.String("SET revoked_at = :t"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": str(t.Format(time.RFC3339Nano))},
		}}
	}
	if _, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: []types.TransactWriteItem{revoke(keyPK(it.Hash)), revoke(keyIDPK(keyID))},
	}); err != nil {
		return nil, fmt.Errorf("revoke key %s: %w", keyID, err)
	}
	it.RevokedAt = &t
	return &it.Key, nil
}

// LookupKey reads the key with the given hash (strongly consistent, so that a
// key is found the moment it was created); auth.ErrUnknownKey when none has it.
// It writes nothing.
func (s *Keys) LookupKey(ctx context.Context, hash string) (*auth.Key, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(keyPK(hash), skKey), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("look up key: %w", err)
	}
	s.record("LookupKey", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, auth.ErrUnknownKey
	}
	var it keyItem
	if err := unmarshal(out.Item, &it); err != nil {
		return nil, fmt.Errorf("decode key: %w", err)
	}
	return &it.Key, nil
}

// SetKeyRateLimits sets the operator's budgets of a key to what change makes
// of the stored key (nil: the service's defaults), on both of its items in one
// transaction; an error from change is returned as is. Processes that cached
// the key apply them within their key cache's lifetime (TIX_KEY_CACHE_TTL).
func (s *Keys) SetKeyRateLimits(ctx context.Context, keyID string, change func(auth.Key) (*auth.RateLimits, error)) (*auth.Key, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(keyIDPK(keyID), skKey), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("find key %s: %w", keyID, err)
	}
	if out.Item == nil {
		return nil, ticketing.NotFound("key " + keyID)
	}
	var it keyRefItem
	if err := unmarshal(out.Item, &it); err != nil {
		return nil, fmt.Errorf("decode key %s: %w", keyID, err)
	}
	rl, err := change(it.Key)
	if err != nil {
		return nil, err
	}
	v, err := attributevalue.MarshalWithOptions(rl, func(o *attributevalue.EncoderOptions) { o.TagKey = "json" })
	if err != nil {
		return nil, fmt.Errorf("marshal rate limits: %w", err)
	}
	set := func(pk string) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: keyOf(pk, skKey),
			UpdateExpression:          aws.String("SET rate_limits = :rl"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":rl": v},
		}}
	}
	if _, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: []types.TransactWriteItem{set(keyPK(it.Hash)), set(keyIDPK(keyID))},
	}); err != nil {
		return nil, fmt.Errorf("set rate limits of key %s: %w", keyID, err)
	}
	it.RateLimits = rl
	return &it.Key, nil
}
