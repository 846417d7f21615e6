package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"tix/internal/ticketing"
)

// PutOrderItem writes o's order item alone (no stock, no outbox), as
// CreateOrder indexes it or, with legacy, under the unsharded list partition
// that orders written before the list was sharded carry.
func (s *Store) PutOrderItem(ctx context.Context, o *ticketing.Order, legacy bool) error {
	item, err := orderAV(o, 1)
	if err != nil {
		return err
	}
	if legacy {
		item["GSI1PK"] = str(orderListPK(o.OrganizerID, string(o.Environment)))
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	return err
}

// OrderIndexPK is the GSI1 partition key the stored order id is listed under.
func (s *Store) OrderIndexPK(ctx context.Context, id string) (string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: keyOf(orderPK(id), skOrder)})
	if err != nil {
		return "", err
	}
	return attrS(out.Item, "GSI1PK"), nil
}
