package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// orderSortKey orders the listing index by creation, newest first when read
// backwards; fixed width so that strings sort as times do.
func orderSortKey(t time.Time, id string) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + id
}

// An order item: top-level attributes for conditions, the listing index and
// the buyer index (buyerKeys),
// the whole order as a JSON document, and a version every write checks and
// bumps, so that no update is lost between a read and a write.
func orderAV(o *ticketing.Order, version int64) (map[string]types.AttributeValue, error) {
	doc, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode order %s: %w", o.ID, err)
	}
	item := map[string]types.AttributeValue{
		"PK": str(orderPK(o.ID)), "SK": str(skOrder),
		"GSI1PK": str(orderListShardPK(o.OrganizerID, string(o.Environment), o.ID)), "GSI1SK": str(orderSortKey(o.CreatedAt, o.ID)),
		"org": str(o.OrganizerID), "env": str(string(o.Environment)), "st": str(string(o.Status)),
		"ev": str(o.EventID), "exp": num(strconv.FormatInt(o.ExpiresAt.UnixMilli(), 10)),
		"ver": num(strconv.FormatInt(version, 10)), "doc": str(string(doc)),
	}
	buyerKeys(o, item)
	return item, nil
}

func orderFrom(item map[string]types.AttributeValue) (*ticketing.Order, error) {
	d, ok := item["doc"].(*types.AttributeValueMemberS)
	if !ok {
		return nil, fmt.Errorf("order item has no document")
	}
	var o ticketing.Order
	if err := json.Unmarshal([]byte(d.Value), &o); err != nil {
		return nil, fmt.Errorf("decode order: %w", err)
	}
	if v, ok := item["ver"].(*types.AttributeValueMemberN); ok {
		o.Version, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	return &o, nil
}

// orderUpdate rewrites an order's document and status, conditional on the
// version read (plus extra conditions), and bumps the version.
func (s *Orders) orderUpdate(o *ticketing.Order, extraCond string, e *exprs) (*types.Update, error) {
	doc, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	cond := e.n("ver") + " = " + e.d(o.Version)
	if extraCond != "" {
		cond += " AND " + extraCond
	}
	return &types.Update{
		TableName: aws.String(s.table), Key: keyOf(orderPK(o.ID), skOrder),
		UpdateExpression: aws.String("SET " + e.n("doc") + " = " + e.s(string(doc)) + ", " + e.n("st") + " = " + e.s(string(o.Status)) +
			", " + e.n("ver") + " = " + e.d(o.Version+1)),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}, nil
}

func outboxPut(s *core, ev *ticketing.OrderEvent) (types.TransactWriteItem, error) {
	doc, err := json.Marshal(ev)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	// Undispatched events are found through a sparse, sharded index entry that
	// delivery removes once it has fanned the event out to the endpoints (by
	// name: nothing needs the shard again, so it is dealt round robin, see
	// outboxShards).
	shard := s.outboxNext.Add(1) % outboxShards
	item := map[string]types.AttributeValue{
		"PK": str(outboxPK(ev.ID)), "SK": str(skEvent), "org": str(ev.OrganizerID), "env": str(string(ev.Environment)),
		"type": str(ev.Type), "doc": str(string(doc)),
		"GSI2PK": str("OUTBOX#" + strconv.Itoa(int(shard))), "GSI2SK": str(ev.CreatedAt.UTC().Format(time.RFC3339Nano) + "#" + ev.ID),
	}
	orderEventKeys(ev, item)
	eventLogKeys(ev, item)
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}}, nil
}

// outboxShards spreads undispatched events over index partitions. An order
// writes about 4 WCU of outbox index entries (two events, each put and removed
// in a transaction), so at 5,000 orders/s a shard takes about 20,000/64 = 310
// WCU/s, a third of a partition's 1,000. Each process deals its events to
// the shards round robin from a random one, so even a short burst spreads
// evenly (a hash of the id leaves some shards with three times the mean over a
// few hundred events). Events written under the former 8 shards (OUTBOX#0..7)
// are among these and are still swept; their entry is removed by name at
// dispatch.
const outboxShards = 64

func occKey(o *ticketing.Order) string {
	if o.OccurrenceID == "" {
		return ticketing.NoOccurrence
	}
	return o.OccurrenceID
}

// seatTakeCond is the condition a line takes its seat under: from its live
// reservation, else a free seat; sell (a reinstated order) takes it free.
func seatTakeCond(e *exprs, o *ticketing.Order, l ticketing.OrderLine, now time.Time, sell bool) string {
	switch {
	case sell:
		// A reinstated order's holds ended with it: its seats are
		// taken again when free, whatever reservation its line names,
		// or still reserved by this (cancelled) order, whose release
		// after CancelOrder is best-effort.
		return "attribute_not_exists(PK) OR (" + e.n("st") + " <> " + e.s(seatSold) + " AND " + e.n("u") + " <= " + e.ms(now) + ") OR (" +
			e.n("o") + " = " + e.s(o.ID) + " AND " + e.n("st") + " = " + e.s(seatReserved) + ")"
	case l.ReservationID == "":
		return "attribute_not_exists(PK) OR (" + e.n("st") + " <> " + e.s(seatSold) + " AND " + e.n("u") + " <= " + e.ms(now) + ")"
	default:
		// A reservation ends with its hold: the seat is taken only from
		// the live hold of this reservation. Released (item deleted),
		// used by an order (reserved, sold, or deleted when that order
		// was cancelled), expired, or re-held by someone else: refused.
		// ReleaseSeat deletes under the same condition, so a release and
		// an order of one reservation cannot both succeed.
		return e.n("r") + " = " + e.s(l.ReservationID) + " AND " + e.n("st") + " = " + e.s(seatHeld) + " AND " + e.n("u") + " > " + e.ms(now)
	}
}

// SetPayment stores the provider's payment on a pending order that has none.
func (s *Orders) SetPayment(ctx context.Context, o *ticketing.Order) error {
	e := newExprs()
	upd, err := s.orderUpdate(o, e.n("st")+" = "+e.s(string(ticketing.OrderPending)), e)
	if err != nil {
		return err
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: upd.TableName, Key: upd.Key, UpdateExpression: upd.UpdateExpression,
		ConditionExpression: upd.ConditionExpression, ExpressionAttributeNames: upd.ExpressionAttributeNames,
		ExpressionAttributeValues: upd.ExpressionAttributeValues, ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("store payment of order %s: %w", o.ID, err)
	}
	s.record("SetPayment", out.ConsumedCapacity)
	o.Version++
	return nil
}

// GetOrder reads an order (strongly consistent); a missing order is a
// not_found error.
func (s *Orders) GetOrder(ctx context.Context, id string) (*ticketing.Order, error) {
	if !validID(id) {
		return nil, ticketing.NotFound("order")
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(orderPK(id), skOrder), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read order %s: %w", id, err)
	}
	s.record("GetOrder", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, ticketing.NotFound("order")
	}
	return orderFrom(out.Item)
}

// ConfirmOrder: pending (not overdue unless overdueOK, payment stored) ->
// paid, seats sold, ticket numbers reserved in the environment, outbox event;
// one transaction.
func (s *Orders) ConfirmOrder(ctx context.Context, o *ticketing.Order, ev *ticketing.OrderEvent, now time.Time, overdueOK bool) error {
	e := newExprs()
	cond := e.n("st") + " = " + e.s(string(ticketing.OrderPending))
	if !overdueOK {
		cond += " AND " + e.n("exp") + " > " + e.ms(now)
	}
	upd, err := s.orderUpdate(o, cond, e)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{{Update: upd}}
	for _, l := range o.Lines {
		if !l.Seated {
			continue
		}
		e := newExprs()
		items = append(items, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: lineSeatKey(o, l),
			UpdateExpression:         aws.String("SET " + e.n("st") + " = " + e.s(seatSold) + " REMOVE " + e.n("u") + ", " + e.n("ttl")),
			ConditionExpression:      aws.String(e.n("o") + " = " + e.s(o.ID) + " AND " + e.n("st") + " = " + e.s(seatReserved)),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		}})
	}
	firstTicket := len(items)
	items = append(items, s.ticketPuts(o)...)
	out, err := outboxPut(s.core, ev)
	if err != nil {
		return err
	}
	items = append(items, out, dueDelete(s.core, o.ExpiryTimer()))
	items = append(items, s.clientCapGiveBack(o)...)
	items = append(items, tallyPaid(s.table, o, now)...)
	err = s.transact(ctx, "ConfirmOrder", items)
	if err == nil {
		o.Version++
		return nil
	}
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		for _, i := range failed {
			if i < firstTicket {
				return ticketing.ErrStateChanged
			}
		}
		return ticketing.ErrTicketNumberTaken
	}
	return fmt.Errorf("confirm order %s: %w", o.ID, err)
}

// CancelOrder: pending -> cancelled (overdueOnly: only past its expiry), tier
// counters and the promo use given back, outbox event; one transaction. Seats
// are freed after it: a reserved seat past its expiry is free anyway, so a
// crash between the two loses nothing.
func (s *Orders) CancelOrder(ctx context.Context, o *ticketing.Order, ev *ticketing.OrderEvent, now time.Time, overdueOnly bool) error {
	e := newExprs()
	cond := e.n("st") + " = " + e.s(string(ticketing.OrderPending))
	if overdueOnly {
		cond += " AND " + e.n("exp") + " <= " + e.ms(now)
	}
	upd, err := s.orderUpdate(o, cond, e)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{{Update: upd}}
	for _, l := range o.Lines {
		items = append(items, s.lineGiveBack(o, l)...)
	}
	if o.Promo != nil && o.Promo.Limited {
		items = append(items, promosOf(s.core).promoMove(o, -1))
	}
	out, err := outboxPut(s.core, ev)
	if err != nil {
		return err
	}
	items = append(items, out, dueDelete(s.core, o.ExpiryTimer()))
	if t, ok := o.CheckTimer(); ok {
		items = append(items, duePut(s.core, t))
	}
	items = append(items, s.clientCapGiveBack(o)...)
	err = s.transact(ctx, "CancelOrder", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("cancel order %s: %w", o.ID, err)
	}
	o.Version++
	for _, l := range o.Lines {
		if l.Seated {
			s.freeSeat(ctx, o, l, seatReserved)
		}
	}
	return nil
}

func (s *Orders) seatDelete(o *ticketing.Order, l ticketing.OrderLine, state string) *types.Delete {
	e := newExprs()
	return &types.Delete{
		TableName: aws.String(s.table), Key: lineSeatKey(o, l),
		ConditionExpression:      aws.String(e.n("o") + " = " + e.s(o.ID) + " AND " + e.n("st") + " = " + e.s(state)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}

func (s *Orders) freeSeat(ctx context.Context, o *ticketing.Order, l ticketing.OrderLine, state string) {
	d := s.seatDelete(o, l, state)
	_, _ = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: d.TableName, Key: d.Key, ConditionExpression: d.ConditionExpression,
		ExpressionAttributeNames: d.ExpressionAttributeNames, ExpressionAttributeValues: d.ExpressionAttributeValues,
	})
}

// StartRefund records a pending refund on a paid order that has none, with
// the marker of its settlement timer when the provider settles on its own; one
// transaction.
func (s *Orders) StartRefund(ctx context.Context, o *ticketing.Order) error {
	e := newExprs()
	upd, err := s.orderUpdate(o, e.n("st")+" = "+e.s(string(ticketing.OrderPaid)), e)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{{Update: upd}}
	if t, ok := o.SettleTimer(); ok {
		items = append(items, duePut(s.core, t))
	}
	err = s.transact(ctx, "StartRefund", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("start refund of order %s: %w", o.ID, err)
	}
	o.Version++
	return nil
}

// CompleteRefund: paid (refund pending) -> refunded, stock given back (tier
// counters, sold seats), outbox event, the settlement timer's marker deleted;
// one transaction.
func (s *Orders) CompleteRefund(ctx context.Context, o *ticketing.Order, ev *ticketing.OrderEvent) error {
	e := newExprs()
	upd, err := s.orderUpdate(o, e.n("st")+" = "+e.s(string(ticketing.OrderPaid)), e)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{{Update: upd}}
	for _, l := range o.Lines {
		if l.Seated {
			items = append(items, types.TransactWriteItem{Delete: s.seatDelete(o, l, seatSold)})
		} else {
			items = append(items, s.lineGiveBack(o, l)...)
		}
	}
	out, err := outboxPut(s.core, ev)
	if err != nil {
		return err
	}
	items = append(items, out)
	if t, ok := o.SettleTimer(); ok {
		items = append(items, dueDelete(s.core, t))
	}
	items = append(items, tallyTiers(s.table, o, -1))
	err = s.transact(ctx, "CompleteRefund", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("complete refund of order %s: %w", o.ID, err)
	}
	o.Version++
	return nil
}
