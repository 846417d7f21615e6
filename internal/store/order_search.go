package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

var _ ticketing.OrderFinder = (*Search)(nil)

// buyerPK is an order's key in the buyer index (GSI3): its organizer,
// environment and the SHA-256 of its buyer's normalized email, never the
// address itself (ticketing.BuyerKey).
func buyerPK(org string, env ticketing.Environment, email string) string {
	return "BUYER#" + ticketing.BuyerKey(org, env, email)
}

// buyerKeys are the buyer index attributes of a new order item (none for an
// order without a buyer email). They are written once, at creation: the
// buyer's email never changes, and later writes SET other attributes only.
func buyerKeys(o *ticketing.Order, item map[string]types.AttributeValue) {
	if ticketing.NormalizeBuyerEmail(o.Buyer.Email) == "" {
		return
	}
	item["GSI3PK"] = str(buyerPK(o.OrganizerID, o.Environment, o.Buyer.Email))
	item["GSI3SK"] = str(orderSortKey(o.CreatedAt, o.ID))
}

// OrdersByBuyer is one Query of the buyer index, newest first: the orders of
// one buyer in one organizer's environment, whatever their number among the
// organizer's. The index is eventually consistent: an order made a moment
// ago may appear a moment later.
func (s *Search) OrdersByBuyer(ctx context.Context, t ticketing.Tenant, email string, limit int) ([]*ticketing.Order, error) {
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("GSI3"),
		KeyConditionExpression:    aws.String("GSI3PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(buyerPK(t.OrganizerID, t.Environment, email))},
		ScanIndexForward:          aws.Bool(false), Limit: aws.Int32(int32(limit)), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("find orders by buyer: %w", err)
	}
	s.record("OrdersByBuyer", out.ConsumedCapacity)
	orders := make([]*ticketing.Order, 0, len(out.Items))
	for _, it := range out.Items {
		o, err := orderFrom(it)
		if err != nil {
			return nil, err
		}
		orders = append(orders, o)
	}
	return orders, nil
}

// TicketOrder reads the ticket number's record (written when the order was
// paid, unique in its environment): one GetItem.
func (s *Search) TicketOrder(ctx context.Context, env ticketing.Environment, number string) (string, error) {
	if number == "" || !env.Valid() {
		return "", ticketing.NotFound("ticket")
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(ticketPK(string(env), number), skTicket), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return "", fmt.Errorf("read ticket %s: %w", number, err)
	}
	s.record("TicketOrder", out.ConsumedCapacity)
	id := attrS(out.Item, "order")
	if id == "" {
		return "", ticketing.NotFound("ticket " + number)
	}
	return id, nil
}

// BackfillBuyerKeys gives the order items written without the buyer index
// keys (before the index held orders) their keys: one Scan of the table for
// such order items, one conditional UpdateItem each (only while the item
// still has no key, so a rerun or a concurrent run changes nothing twice).
// It is an operator's one-off (tixctl orders backfill-buyer-index): it
// reads the whole table. It returns how many orders it gave keys to.
func (s *Search) BackfillBuyerKeys(ctx context.Context) (int, error) {
	n := 0
	var start map[string]types.AttributeValue
	for {
		out, err := s.db.Scan(ctx, &dynamodb.ScanInput{
			TableName: aws.String(s.table), ExclusiveStartKey: start,
			FilterExpression:          aws.String("SK = :sk AND attribute_not_exists(GSI3PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":sk": str(skOrder)},
		})
		if err != nil {
			return n, fmt.Errorf("scan for orders without buyer keys: %w", err)
		}
		for _, it := range out.Items {
			done, err := s.backfillBuyer(ctx, it)
			if err != nil {
				return n, err
			}
			if done {
				n++
			}
		}
		if start = out.LastEvaluatedKey; start == nil {
			return n, nil
		}
	}
}

func (s *Search) backfillBuyer(ctx context.Context, it map[string]types.AttributeValue) (bool, error) {
	o, err := orderFrom(it)
	if err != nil {
		return false, err
	}
	keys := map[string]types.AttributeValue{}
	if buyerKeys(o, keys); len(keys) == 0 {
		return false, nil
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(orderPK(o.ID), skOrder),
		UpdateExpression:          aws.String("SET GSI3PK = :pk, GSI3SK = :sk"),
		ConditionExpression:       aws.String("attribute_exists(PK) AND attribute_not_exists(GSI3PK)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": keys["GSI3PK"], ":sk": keys["GSI3SK"]},
	})
	if _, failed := isConditionFailed(err); failed {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("give order %s its buyer keys: %w", o.ID, err)
	}
	return true, nil
}
