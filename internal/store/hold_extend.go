package store

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// ExtendHold moves a hold's expiry and its seats' to until in one
// transaction (see the port). The hold item keeps its expiry in x (Unix ms),
// which never goes back: a slower extension that read an older expiry fails
// instead of shortening a later one.
func (s *Holds) ExtendHold(ctx context.Context, h *ticketing.Hold, seats []ticketing.HoldSeat, until, now time.Time) error {
	n := *h
	n.ExpiresAt = until
	doc, err := json.Marshal(&n)
	if err != nil {
		return err
	}
	items := make([]types.TransactWriteItem, 0, len(seats)+2)
	for _, seat := range seats {
		e := newExprs()
		items = append(items, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: seatKey(h.EventID, h.Environment, h.OccurrenceID, seat.SeatID, seat.Block),
			UpdateExpression: aws.String("SET " + e.n("u") + " = " + e.ms(until) + ", " + e.n("ttl") + " = " + e.v(ttlOf(until))),
			ConditionExpression: aws.String(e.n("r") + " = " + e.s(seat.ReservationID) + " AND " + e.n("st") + " = " + e.s(seatHeld) +
				" AND " + e.n("u") + " > " + e.ms(now)),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		}})
	}
	e := newExprs()
	holdCond := "attribute_exists(PK)"
	if until.After(now) { // an extension never shortens; expiring now may
		holdCond += " AND (attribute_not_exists(" + e.n("x") + ") OR " + e.n("x") + " <= " + e.ms(until) + ")"
	}
	items = append(items, types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: keyOf(holdPK(h.ID), skHold),
		UpdateExpression: aws.String("SET " + e.n("doc") + " = " + e.s(string(doc)) + ", " + e.n("x") + " = " + e.ms(until) +
			", " + e.n("ttl") + " = " + e.v(ttlOf(until))),
		ConditionExpression:      aws.String(holdCond),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}})
	if c := h.ClientCap; c != nil {
		e := newExprs()
		items = append(items, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: keyOf(clientCapPK(c.Key), skClientCap),
			UpdateExpression:         aws.String("SET " + e.n(clientCapHold+h.ID) + " = " + e.ms(until)),
			ConditionExpression:      aws.String("attribute_exists(" + e.n(clientCapHold+h.ID) + ")"),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		}})
	}
	err = s.transact(ctx, "ExtendHold", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		if failed[0] < len(seats) {
			return &ticketing.StockError{Index: failed[0], Seat: true}
		}
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("extend hold %s: %w", h.ID, err)
	}
	if h.IPKey != "" {
		s.extendHoldIP(ctx, h.IPKey, h.ID, until)
	}
	return nil
}

// extendHoldIP moves the hold's entry in its IP's record of active holds, and
// bumps the record's version so that a hold written from an older read tries
// again. A lost write only lets the IP count the hold as ended earlier.
func (s *Holds) extendHoldIP(ctx context.Context, key, holdID string, until time.Time) {
	e := newExprs()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(holdIPPK(key), skHoldIP),
		UpdateExpression:         aws.String("SET " + e.n("holds") + "." + e.n(holdID) + " = " + e.ms(until) + ", " + e.n("v") + " = " + e.n("v") + " + " + e.d(1)),
		ConditionExpression:      aws.String("attribute_exists(" + e.n("holds") + "." + e.n(holdID) + ")"),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
	if _, failed := isConditionFailed(err); err != nil && !failed {
		slog.WarnContext(ctx, "extend a hold in its IP's record", "hold_id", holdID, "error", err)
	}
}
