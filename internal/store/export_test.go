package store

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// PutStaleReservation writes back the seat item of o's seated line i as o
// reserved it: what a cancelled order leaves when the best-effort release
// after CancelOrder did not happen (a crash between the two).
func (s *Store) PutStaleReservation(ctx context.Context, o *ticketing.Order, i int) error {
	l := o.Lines[i]
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: map[string]types.AttributeValue{
		"PK": lineSeatKey(o, l)["PK"], "SK": lineSeatKey(o, l)["SK"],
		"t": str(l.TierID), "o": str(o.ID), "st": str(seatReserved),
		"u": num(strconv.FormatInt(o.ExpiresAt.UnixMilli(), 10)), "ttl": ttlOf(o.ExpiresAt),
	}})
	return err
}

// SeatStateAt reads the state (st) of a seat's item in stock partition block
// of the event ("" when there is none there).
func (s *Store) SeatStateAt(ctx context.Context, event string, env ticketing.Environment, occ, seat string, block int) (string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: seatKey(event, env, occ, seat, block), ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item == nil {
		return "", err
	}
	return sAttr(out.Item, "st"), nil
}

// PutLegacyDueMarker writes t's marker where the former 8-shard layout put it
// (DUE#<fnv mod 8>), and reports whether that differs from its 64-shard key.
func (s *Store) PutLegacyDueMarker(ctx context.Context, t ticketing.Timer) (bool, error) {
	item := keyOf(dueShardPK(shardOf(t.OrderID, legacyTimerShards)), dueID(t))
	item["kind"], item["oid"] = str(t.Kind), str(t.OrderID)
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	return attrS(item, "PK") != attrS(dueKey(t), "PK"), err
}

// PutDeliveryItem writes a delivery item as Dispatch would (without its event),
// or, legacy, under the unsharded listing partitions deliveries had before the
// listing indexes were write-sharded.
func (s *Store) PutDeliveryItem(ctx context.Context, d *webhook.Delivery, legacy bool) error {
	item, err := deliveryAV(d, 1)
	if err != nil {
		return err
	}
	if legacy {
		item["GSI1PK"] = str(deliveryListPK(d.OrganizerID, string(d.Environment)))
		item["GSI2PK"] = str(deliveryEndpointPK(d.EndpointID))
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	return err
}

// TicketEventShard is the ticket event index shard of a ticket number.
func TicketEventShard(number string) int { return int(shardOf(number, ticketEventShards)) }

// PutIndexedTicket writes a sold ticket of event as the order path does,
// indexed in the shard of its number among shards (16: the former layout).
func (s *Store) PutIndexedTicket(ctx context.Context, env ticketing.Environment, org, event, number string, shards uint32) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: map[string]types.AttributeValue{
		"PK": str(ticketPK(string(env), number)), "SK": str(skTicket), "order": str("ord_" + number), "org": str(org), "ev": str(event),
		"k": str(ticketKindTicket), "GSI3PK": str(ticketEventPK(string(env), event, shardOf(number, shards))), "GSI3SK": str(number),
	}})
	return err
}

// PutPromoUses sets the uses counted on shard of a limited code of event.
func (s *Store) PutPromoUses(ctx context.Context, event string, env ticketing.Environment, code string, shard, used int) error {
	item := promoKey(event, env, code, shard)
	item["used"] = num(strconv.Itoa(used))
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	return err
}

// ClientCapCount reads the orders and units counted on a client's counter.
func (s *Store) ClientCapCount(ctx context.Context, key string) (orders, units int, err error) {
	item, err := s.Limits.clientCapItem(ctx, key)
	if err != nil {
		return 0, 0, err
	}
	var n struct {
		N int `json:"n"`
		U int `json:"u"`
	}
	if err := unmarshal(item, &n); err != nil {
		return 0, 0, err
	}
	return n.N, n.U, nil
}
