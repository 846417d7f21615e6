package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// keyItem is an API key, addressed by the hash of its secret. It also carries the
// key's rate-limit windows (rl_<bucket>_w, rl_<bucket>_n): a request is counted by
// one conditional UpdateItem once it passed every check. It is in no index, so that
// update costs one write unit; keyRefItem (by key id, indexed for listing) holds
// a copy of the key for the operator's list and revoke.
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
func (s *Store) CreateKey(ctx context.Context, k auth.Key, hash string) error {
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
func (s *Store) ListKeys(ctx context.Context, organizerID string) ([]auth.Key, error) {
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

// RevokeKey marks a key revoked by its public id; it stops authenticating at once.
// Revoking a revoked key keeps the first revocation time.
func (s *Store) RevokeKey(ctx context.Context, keyID string, at time.Time) (*auth.Key, error) {
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
// It writes nothing: the budget is charged by Admit, once every check passed.
func (s *Store) LookupKey(ctx context.Context, hash string) (*auth.Key, error) {
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

// notRevoked is the condition that a key item exists and carries no revocation
// (an unrevoked key stores revoked_at as NULL).
const notRevoked = "attribute_exists(PK) AND (attribute_not_exists(revoked_at) OR attribute_type(revoked_at, :nul))"

// Admit takes one request from the budget of the key with the given hash in the
// current fixed window (window length window, limit requests). Admission is
// decided by DynamoDB's condition, so every function instance shares the budget
// and no more than limit requests are admitted per window, however many run at
// once. The same condition requires the key to exist and not be revoked
// (auth.ErrUnknownKey, auth.ErrKeyRevoked: nothing is written), so a revocation
// stops a key at once even where its item was read earlier.
func (s *Store) Admit(ctx context.Context, hash, bucket string, limit int, window time.Duration, now time.Time) (auth.Budget, error) {
	win := now.UnixMilli() / window.Milliseconds()
	reset := time.UnixMilli((win + 1) * window.Milliseconds()).UTC()
	names := map[string]string{"#w": "rl_" + bucket + "_w", "#n": "rl_" + bucket + "_n"}
	nul := &types.AttributeValueMemberS{Value: "NULL"}
	vals := map[string]types.AttributeValue{
		":w": num(strconv.FormatInt(win, 10)), ":one": num("1"), ":lim": num(strconv.Itoa(limit)), ":nul": nul,
	}
	for attempt := 0; attempt < 3; attempt++ {
		// The common case: same window, under budget.
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: keyOf(keyPK(hash), skKey),
			UpdateExpression: aws.String("SET #n = #n + :one"),
			// A window ahead of ours (another instance's clock runs a little fast) is
			// the current one: counting in it keeps the budget shared.
			ConditionExpression:                 aws.String(notRevoked + " AND #w >= :w AND #n < :lim"),
			ExpressionAttributeNames:            names,
			ExpressionAttributeValues:           vals,
			ReturnValues:                        types.ReturnValueUpdatedNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			ReturnConsumedCapacity:              s.rcc(),
		})
		if err == nil {
			s.record("Admit", out.ConsumedCapacity)
			return budgetFrom(out.Attributes, bucket, limit, reset, true), nil
		}
		cf, ok := isConditionFailed(err)
		if !ok {
			return auth.Budget{}, fmt.Errorf("admit request: %w", err)
		}
		if cf.Item == nil {
			return auth.Budget{}, auth.ErrUnknownKey
		}
		if _, isNull := cf.Item["revoked_at"].(*types.AttributeValueMemberNULL); !isNull && cf.Item["revoked_at"] != nil {
			return auth.Budget{}, auth.ErrKeyRevoked
		}
		if v, ok := cf.Item["rl_"+bucket+"_w"].(*types.AttributeValueMemberN); ok {
			if w, _ := strconv.ParseInt(v.Value, 10, 64); w >= win {
				// Same window and the budget is spent.
				reset = time.UnixMilli((w + 1) * window.Milliseconds()).UTC()
				return budgetFrom(cf.Item, bucket, limit, reset, false), nil
			}
		}
		// A new window: start it at 1, unless another request started it first.
		out, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: keyOf(keyPK(hash), skKey),
			UpdateExpression:          aws.String("SET #w = :w, #n = :one"),
			ConditionExpression:       aws.String(notRevoked + " AND (attribute_not_exists(#w) OR #w < :w)"),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: map[string]types.AttributeValue{":w": vals[":w"], ":one": vals[":one"], ":nul": nul},
			ReturnValues:              types.ReturnValueUpdatedNew,
			ReturnConsumedCapacity:    s.rcc(),
		})
		if err == nil {
			s.record("Admit", out.ConsumedCapacity)
			return budgetFrom(out.Attributes, bucket, limit, reset, limit >= 1), nil
		}
		if _, ok := isConditionFailed(err); !ok {
			return auth.Budget{}, fmt.Errorf("open rate window: %w", err)
		}
	}
	return auth.Budget{}, fmt.Errorf("admit request: rate window kept moving")
}

func budgetFrom(item map[string]types.AttributeValue, bucket string, limit int, reset time.Time, admitted bool) auth.Budget {
	used := limit
	if v, ok := item["rl_"+bucket+"_n"].(*types.AttributeValueMemberN); ok {
		used, _ = strconv.Atoi(v.Value)
	}
	rem := max(limit-used, 0)
	return auth.Budget{Limit: limit, Remaining: rem, Reset: reset, Admitted: admitted}
}
