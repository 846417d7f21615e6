package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/dashboard/account"
)

// Passkeys is the dashboard's passkey storage (account.Passkeys), on the
// accounts' items.
type Passkeys struct{ a *Accounts }

// Passkeys returns the passkey storage over s's table.
func (s *Store) Passkeys() *Passkeys { return &Passkeys{a: s.Accounts()} }

var _ account.Passkeys = (*Passkeys)(nil)

// A passkey is two items: the record under its account (DUSER#<email>,
// PASSKEY#<id>: listed with one consistent query, and the item a sign-in's
// conditional write changes) and a pointer from its credential id
// (DPASSKEY#<id>) to the account, which is all a sign-in names.
const (
	passkeyPrefix = "PASSKEY#"
	skPasskeyRef  = "PASSKEY"
)

func passkeyRefPK(id string) string { return "DPASSKEY#" + id }

type passkeyItem struct {
	PK, SK string
	account.Passkey
}

type passkeyRefItem struct {
	PK, SK string
	Email  string `json:"email"`
}

// AddPasskey writes the record and its pointer in one transaction, each
// only if absent: a credential id belongs to one account.
func (ps *Passkeys) AddPasskey(ctx context.Context, p account.Passkey) error {
	var items []types.TransactWriteItem
	for _, v := range []any{
		passkeyRefItem{PK: passkeyRefPK(p.ID), SK: skPasskeyRef, Email: p.Email},
		passkeyItem{PK: userPK(p.Email), SK: passkeyPrefix + p.ID, Passkey: p},
	} {
		put, err := ps.a.put(v)
		if err != nil {
			return fmt.Errorf("marshal passkey: %w", err)
		}
		items = append(items, types.TransactWriteItem{Put: put})
	}
	_, err := ps.a.s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return account.ErrExists
	}
	if err != nil {
		return fmt.Errorf("add passkey: %w", err)
	}
	return nil
}

// GetPasskey follows the credential id's pointer to the account's record.
func (ps *Passkeys) GetPasskey(ctx context.Context, id string) (*account.Passkey, error) {
	var ref passkeyRefItem
	if err := ps.a.get(ctx, passkeyRefPK(id), skPasskeyRef, &ref); err != nil {
		return nil, err
	}
	var it passkeyItem
	if err := ps.a.get(ctx, userPK(ref.Email), passkeyPrefix+id, &it); err != nil {
		return nil, err
	}
	return &it.Passkey, nil
}

// ListPasskeys reads the account's passkeys (one consistent query), oldest first.
func (ps *Passkeys) ListPasskeys(ctx context.Context, email string) ([]account.Passkey, error) {
	out := []account.Passkey{}
	err := ps.a.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(userPK(email)), ":p": str(passkeyPrefix)},
		ConsistentRead:            aws.Bool(true),
	}, 0, func(item map[string]types.AttributeValue) error {
		var it passkeyItem
		if err := unmarshal(item, &it); err != nil {
			return fmt.Errorf("decode passkey: %w", err)
		}
		out = append(out, it.Passkey)
		return nil
	})
	account.SortPasskeys(out)
	return out, err
}

// RemovePasskey deletes the record and its pointer, both only if they are
// the account's.
func (ps *Passkeys) RemovePasskey(ctx context.Context, email, id string) error {
	e := newExprs()
	cond := "attribute_exists(PK) AND " + e.n("email") + " = " + e.s(email)
	_, err := ps.a.s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(ps.a.s.table), Key: keyOf(passkeyRefPK(id), skPasskeyRef),
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals}},
		{Delete: &types.Delete{TableName: aws.String(ps.a.s.table), Key: keyOf(userPK(email), passkeyPrefix+id),
			ConditionExpression: aws.String("attribute_exists(PK)")}},
	}})
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return account.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("remove passkey: %w", err)
	}
	return nil
}

// UsePasskey sets the new sign count, backup state and last use, only if
// the stored count is still the one the sign-in was checked against.
func (ps *Passkeys) UsePasskey(ctx context.Context, email, id string, u account.PasskeyUse) error {
	e := newExprs()
	count := e.n("sign_count")
	_, err := ps.a.s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(ps.a.s.table), Key: keyOf(userPK(email), passkeyPrefix+id),
		UpdateExpression: aws.String("SET " + count + " = " + e.v(num(strconv.FormatUint(uint64(u.SignCount), 10))) +
			", " + e.n("backup_state") + " = " + e.v(&types.AttributeValueMemberBOOL{Value: u.BackupState}) +
			", " + e.n("last_used_at") + " = " + e.s(u.At.UTC().Format(time.RFC3339Nano))),
		ConditionExpression:      aws.String("attribute_exists(PK) AND " + count + " = " + e.v(num(strconv.FormatUint(uint64(u.PrevCount), 10)))),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
	if _, ok := isConditionFailed(err); ok {
		return account.ErrChanged
	}
	if err != nil {
		return fmt.Errorf("use passkey: %w", err)
	}
	return nil
}
