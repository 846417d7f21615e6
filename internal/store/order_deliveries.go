package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// An order's webhooks: each outbox event of an order carries the order's key
// on GSI1 (ORDEVT#<order>), kept after dispatch; a delivery lives in its
// event's partition, so the deliveries of an order are one Query of the
// index and one Query per event (an order has a few: paid, refunded...).

func orderEventsPK(orderID string) string { return "ORDEVT#" + orderID }

// orderEventKeys are the order index attributes of a new outbox event.
func orderEventKeys(ev *ticketing.OrderEvent, item map[string]types.AttributeValue) {
	if ev.Order.ID == "" {
		return
	}
	item["GSI1PK"] = str(orderEventsPK(ev.Order.ID))
	item["GSI1SK"] = str(orderSortKey(ev.CreatedAt, ev.ID))
}

// maxOrderEvents bounds the events read for one order's deliveries.
const maxOrderEvents = 50

// OrderDeliveries are the deliveries of an order's events, oldest event
// first (an event's deliveries in endpoint order). Events written before the
// order key existed are not found (docs/aws.md).
func (s *Webhooks) OrderDeliveries(ctx context.Context, orderID string) ([]*webhook.Delivery, error) {
	if !validID(orderID) {
		return nil, nil
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(orderEventsPK(orderID))},
		ProjectionExpression:      aws.String("PK"), Limit: aws.Int32(maxOrderEvents), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("find the events of order %s: %w", orderID, err)
	}
	s.record("OrderEvents", out.ConsumedCapacity)
	var ds []*webhook.Delivery
	for _, it := range out.Items {
		got, err := s.eventDeliveries(ctx, attrS(it, "PK"))
		if err != nil {
			return nil, err
		}
		ds = append(ds, got...)
	}
	return ds, nil
}

// eventDeliveries reads the deliveries in an outbox event's partition.
func (s *Webhooks) eventDeliveries(ctx context.Context, pk string) ([]*webhook.Delivery, error) {
	var ds []*webhook.Delivery
	var start map[string]types.AttributeValue
	for {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(s.table), KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :whd)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk), ":whd": str(deliverySK(""))},
			ExclusiveStartKey:         start, ReturnConsumedCapacity: s.rcc(),
		})
		if err != nil {
			return nil, fmt.Errorf("read the deliveries of %s: %w", strings.TrimPrefix(pk, "OEVT#"), err)
		}
		s.record("EventDeliveries", out.ConsumedCapacity)
		for _, it := range out.Items {
			d, err := deliveryFrom(it)
			if err != nil {
				return nil, err
			}
			ds = append(ds, d)
		}
		if start = out.LastEvaluatedKey; start == nil {
			return ds, nil
		}
	}
}
