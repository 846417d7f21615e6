package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// Limits per client (an IPv4 address or an IPv6 /64) of a publishable key.

// clientCapPK is the counter of a client's pending publishable-key orders and
// live seat holds for one event: n orders, and u units in those orders and
// holds together. Orders are taken in their creation transaction, conditional
// on the limits, and given back in the transaction that pays, cancels or
// expires them; a hold's seats are taken in the hold's transaction and given
// back as they are released, used by an order (moved to its count) or once
// the hold has expired, so the limits hold under any concurrency.
func clientCapPK(key string) string { return "PCAP#" + key }

// The counter's attributes per counted order (its expiry, Unix ms), which
// tells which counted orders are overdue, and per counted hold (its expiry,
// and how many of its seats are still counted).
const (
	clientCapOrder     = "o_"
	clientCapHold      = "h_"
	clientCapHoldSeats = "s_"
)

// ClientCapOverdue returns the counted orders of a client's counter whose expiry
// is at or before now (their expiry timer has not run yet).
func (s *Limits) ClientCapOverdue(ctx context.Context, key string, now time.Time) ([]string, error) {
	item, err := s.clientCapItem(ctx, key)
	if err != nil {
		return nil, err
	}
	return overdueIn(item, clientCapOrder, now), nil
}

func (s *Limits) clientCapItem(ctx context.Context, key string) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(clientCapPK(key), skClientCap), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read client's pending orders and holds: %w", err)
	}
	s.record("ClientCapOverdue", out.ConsumedCapacity)
	return out.Item, nil
}

// overdueIn lists the ids of the item's attributes prefix<id> whose value (a
// Unix ms expiry) is at or before now.
func overdueIn(item map[string]types.AttributeValue, prefix string, now time.Time) []string {
	var ids []string
	for name, v := range item {
		id, ok := strings.CutPrefix(name, prefix)
		n, isNum := v.(*types.AttributeValueMemberN)
		if !ok || !isNum {
			continue
		}
		if ms, err := strconv.ParseInt(n.Value, 10, 64); err == nil && ms <= now.UnixMilli() {
			ids = append(ids, id)
		}
	}
	return ids
}

// ReleaseOverdueHolds gives back the seats still counted for each expired hold
// of a client's counter: one conditional update per hold, on the count read,
// so each is given back once.
func (s *Limits) ReleaseOverdueHolds(ctx context.Context, key string, now time.Time) (int, error) {
	item, err := s.clientCapItem(ctx, key)
	if err != nil {
		return 0, err
	}
	released := 0
	for _, id := range overdueIn(item, clientCapHold, now) {
		seats, ok := item[clientCapHoldSeats+id].(*types.AttributeValueMemberN)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(seats.Value, 10, 64)
		if err != nil {
			continue
		}
		e := newExprs()
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: keyOf(clientCapPK(key), skClientCap),
			UpdateExpression:         aws.String("REMOVE " + e.n(clientCapHold+id) + ", " + e.n(clientCapHoldSeats+id) + " ADD " + e.n("u") + " " + e.d(-n)),
			ConditionExpression:      aws.String(e.n(clientCapHoldSeats+id) + " = " + e.d(n)),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		})
		if _, ok := isConditionFailed(err); ok {
			continue // given back by another request, or changed since: the next one sees it
		}
		if err != nil {
			return released, fmt.Errorf("give back expired hold %s: %w", id, err)
		}
		released++
	}
	return released, nil
}

// clientCapTake takes an order's place under its client's cap: one more
// order and its new units (NewUnits), within the limits, and moves the seats
// of the holds it uses from their count.
func (s *Orders) clientCapTake(o *ticketing.Order) *types.Update {
	c, e := o.ClientCap, newExprs()
	n, u := e.n("n"), e.n("u")
	add := c.NewUnits(o.Quantity)
	set := e.n("ttl") + " = " + e.v(ttlOf(o.ExpiresAt)) + ", " + e.n(clientCapOrder+o.ID) + " = " + e.ms(o.ExpiresAt)
	cond := "(attribute_not_exists(" + n + ") OR " + n + " < " + e.d(int64(c.MaxOrders)) + ")"
	if add > 0 {
		cond += " AND (attribute_not_exists(" + u + ") OR " + u + " <= " + e.d(int64(c.MaxUnits-add)) + ")"
	}
	for id, k := range c.Holds {
		hs := e.n(clientCapHoldSeats + id)
		set += ", " + hs + " = " + hs + " - " + e.d(int64(k))
		cond += " AND " + hs + " >= " + e.d(int64(k))
	}
	return &types.Update{
		TableName: aws.String(s.table), Key: keyOf(clientCapPK(c.Key), skClientCap),
		UpdateExpression:         aws.String("ADD " + n + " " + e.d(1) + ", " + u + " " + e.d(int64(add)) + " SET " + set),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}

// clientCapHoldTake counts a hold's seats on its client's counter, within
// MaxUnits.
func (s *Holds) clientCapHoldTake(h *ticketing.Hold) *types.Update {
	c, e := h.ClientCap, newExprs()
	u, seats := e.n("u"), int64(len(h.Seats))
	return &types.Update{
		TableName: aws.String(s.table), Key: keyOf(clientCapPK(c.Key), skClientCap),
		UpdateExpression: aws.String("ADD " + u + " " + e.d(seats) + " SET " + e.n(clientCapHold+h.ID) + " = " + e.ms(h.ExpiresAt) + ", " +
			e.n(clientCapHoldSeats+h.ID) + " = " + e.d(seats) + ", " + e.n("ttl") + " = if_not_exists(" + e.n("ttl") + ", " + e.v(ttlOf(h.ExpiresAt)) + ")"),
		ConditionExpression:      aws.String("attribute_not_exists(" + u + ") OR " + u + " <= " + e.d(int64(c.MaxUnits)-seats)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}

// clientCapSeatBack gives one released seat of a counted hold back to its
// client's counter, while the hold is still counted there.
func (s *Holds) clientCapSeatBack(ctx context.Context, h *ticketing.Hold) error {
	e := newExprs()
	hs := e.n(clientCapHoldSeats + h.ID)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(clientCapPK(h.ClientCap.Key), skClientCap),
		UpdateExpression:         aws.String("SET " + hs + " = " + hs + " - " + e.d(1) + " ADD " + e.n("u") + " " + e.d(-1)),
		ConditionExpression:      aws.String(hs + " >= " + e.d(1)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
	if _, ok := isConditionFailed(err); ok {
		return nil // given back already with the expired hold
	}
	if err != nil {
		return fmt.Errorf("give back a released seat of hold %s: %w", h.ID, err)
	}
	return nil
}

// clientCapGiveBack returns an order's place under its client's cap (nil for an
// order of a secret key).
func (s *Orders) clientCapGiveBack(o *ticketing.Order) []types.TransactWriteItem {
	if o.ClientCap == nil {
		return nil
	}
	e := newExprs()
	return []types.TransactWriteItem{{Update: &types.Update{
		TableName: aws.String(s.table), Key: keyOf(clientCapPK(o.ClientCap.Key), skClientCap),
		UpdateExpression: aws.String("ADD " + e.n("n") + " " + e.d(-1) + ", " + e.n("u") + " " + e.d(-int64(o.Quantity)) +
			" REMOVE " + e.n(clientCapOrder+o.ID)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}}}
}

func clientRatePK(key string, win int64) string {
	return "CRL#" + key + "#" + strconv.FormatInt(win, 10)
}

// AdmitClientRate counts one request against a fixed-window budget of limit per
// window under key (a client of a publishable key): one conditional write on the
// window's own item, so a new window needs no reset and instances share the budget.
func (s *Limits) AdmitClientRate(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (bool, time.Time, error) {
	win := now.UnixMilli() / window.Milliseconds()
	reset := time.UnixMilli((win + 1) * window.Milliseconds()).UTC()
	e := newExprs()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(clientRatePK(key, win), skClientRL),
		UpdateExpression: aws.String("ADD " + e.n("n") + " " + e.d(1) + " SET " + e.n("ttl") + " = " +
			e.v(num(strconv.FormatInt(reset.Add(housekeeping).Unix(), 10)))),
		ConditionExpression:      aws.String("attribute_not_exists(" + e.n("n") + ") OR " + e.n("n") + " < " + e.d(int64(limit))),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return false, reset, nil
	}
	if err != nil {
		return false, reset, fmt.Errorf("count client request: %w", err)
	}
	s.record("AdmitClientRate", out.ConsumedCapacity)
	return true, reset, nil
}
