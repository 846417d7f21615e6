package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketcode"
	"tix/internal/ticketing"
)

// An organizer's ticket signing keys in one environment are one item
// (TKEYS#<org>#<env>, TKEYS): the key set as JSON (private halves sealed)
// and a version every write checks.
const skTicketKeys = "TKEYS"

func ticketKeysPK(t ticketing.Tenant) string {
	return "TKEYS#" + t.OrganizerID + "#" + string(t.Environment)
}

// GetTicketKeys reads the tenant's key set (not_found when it has none).
func (s *TicketKeys) GetTicketKeys(ctx context.Context, t ticketing.Tenant) (*ticketcode.KeySet, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(ticketKeysPK(t), skTicketKeys), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("read ticket keys: %w", err)
	}
	if out.Item == nil {
		return nil, ticketing.NotFound("ticket keys")
	}
	var ks ticketcode.KeySet
	if ks.Version, err = docVersion(out.Item, &ks); err != nil {
		return nil, fmt.Errorf("decode ticket keys: %w", err)
	}
	return &ks, nil
}

// SaveTicketKeys writes a new key set (Version 0) or the next version of one.
func (s *TicketKeys) SaveTicketKeys(ctx context.Context, ks *ticketcode.KeySet) error {
	doc, err := json.Marshal(ks)
	if err != nil {
		return err
	}
	t := ticketing.Tenant{OrganizerID: ks.OrganizerID, Environment: ticketing.Environment(ks.Environment)}
	e := newExprs()
	cond := "attribute_not_exists(PK)"
	if ks.Version > 0 {
		cond = e.n("ver") + " = " + e.d(ks.Version)
	}
	item := map[string]types.AttributeValue{"PK": str(ticketKeysPK(t)), "SK": str(skTicketKeys), "org": str(ks.OrganizerID),
		"env": str(ks.Environment), "doc": str(string(doc)), "ver": num(strconv.FormatInt(ks.Version+1, 10))}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String(cond)}
	if len(e.names) > 0 {
		in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.names, e.vals
	}
	_, err = s.db.PutItem(ctx, in)
	if _, ok := isConditionFailed(err); ok {
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("write ticket keys: %w", err)
	}
	ks.Version++
	return nil
}
