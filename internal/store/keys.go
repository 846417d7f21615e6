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

// RevokeKey marks a key revoked by its public id, by its operator; processes
// that cached the key stop accepting it within their key cache's lifetime
// (TIX_KEY_CACHE_TTL). Revoking a revoked key keeps the first revocation.
func (s *Keys) RevokeKey(ctx context.Context, keyID string, at time.Time) (*auth.Key, error) {
	k, _, err := s.RevokeKeyWith(ctx, keyID, auth.Revocation{At: at})
	return k, err
}

// RevokeKeyWith revokes a key by its public id with a reason and a source
// (tixctl keys revoke --leaked). It reports whether this call revoked it: of
// calls racing on one key, one conditional write wins and the others find
// the key revoked and change nothing (the first revocation stays, with its
// reason and source).
func (s *Keys) RevokeKeyWith(ctx context.Context, keyID string, rev auth.Revocation) (*auth.Key, bool, error) {
	it, err := s.keyRef(ctx, keyID)
	if err != nil {
		return nil, false, err
	}
	return s.revoke(ctx, it, rev)
}

// RevokeKeyByHash revokes the key whose secret hashes to hash, as
// RevokeKeyWith does; auth.ErrUnknownKey when no key has that hash.
func (s *Keys) RevokeKeyByHash(ctx context.Context, hash string, rev auth.Revocation) (*auth.Key, bool, error) {
	k, err := s.LookupKey(ctx, hash)
	if err != nil {
		return nil, false, err
	}
	return s.RevokeKeyWith(ctx, k.ID, rev)
}

// KeyByID reads a key by its public id (ticketing not_found when none has it).
func (s *Keys) KeyByID(ctx context.Context, keyID string) (*auth.Key, error) {
	it, err := s.keyRef(ctx, keyID)
	if err != nil {
		return nil, err
	}
	return &it.Key, nil
}

func (s *Keys) keyRef(ctx context.Context, keyID string) (*keyRefItem, error) {
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
	return &it, nil
}

// revoke writes the revocation on both items of a key, on condition that
// neither is revoked yet (a key created without one holds revoked_at NULL).
func (s *Keys) revoke(ctx context.Context, it *keyRefItem, rev auth.Revocation) (*auth.Key, bool, error) {
	if it.RevokedAt != nil {
		return &it.Key, false, nil
	}
	t := rev.At.UTC()
	vals := map[string]types.AttributeValue{":t": str(t.Format(time.RFC3339Nano)), ":null": str("NULL")}
	set := "SET revoked_at = :t"
	if rev.Reason != "" {
		set, vals[":r"] = set+", revoke_reason = :r", str(rev.Reason)
	}
	if rev.Source != "" {
		set, vals[":s"] = set+", leak_source = :s", str(rev.Source)
	}
	update := func(pk string) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: keyOf(pk, skKey), UpdateExpression: aws.String(set),
			ConditionExpression:       aws.String("attribute_exists(PK) AND (attribute_not_exists(revoked_at) OR attribute_type(revoked_at, :null))"),
			ExpressionAttributeValues: vals,
		}}
	}
	for attempt := 0; ; attempt++ {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems: []types.TransactWriteItem{update(keyPK(it.Hash)), update(keyIDPK(it.ID))},
		})
		if err == nil {
			break
		}
		// Another revocation of the key won (its condition failed), or is in
		// flight (a transaction conflict): read what it left.
		failed, _ := failedItems(err)
		if (len(failed) == 0 && !txConflict(err)) || attempt >= 5 {
			return nil, false, fmt.Errorf("revoke key %s: %w", it.ID, err)
		}
		first, rerr := s.keyRef(ctx, it.ID)
		if rerr != nil {
			return nil, false, rerr
		}
		if first.RevokedAt != nil {
			return &first.Key, false, nil
		}
	}
	it.RevokedAt, it.RevokeReason, it.LeakSource = &t, rev.Reason, rev.Source
	return &it.Key, true, nil
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
