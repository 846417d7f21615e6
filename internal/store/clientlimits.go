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

// clientCapPK is the counter of a client's pending publishable-key orders for one
// event: n orders holding u units. It is taken in the order's creation
// transaction, conditional on the limits, and given back in the transaction that
// pays, cancels or expires the order, so it is exact under any concurrency.
func clientCapPK(key string) string { return "PCAP#" + key }

// clientCapOrder prefixes the counter's attribute per counted order (its expiry,
// Unix ms), which tells which counted orders are overdue.
const clientCapOrder = "o_"

// ClientCapOverdue returns the counted orders of a client's counter whose expiry
// is at or before now (their expiry timer has not run yet).
func (s *Store) ClientCapOverdue(ctx context.Context, key string, now time.Time) ([]string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(clientCapPK(key), skClientCap), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read client's pending orders: %w", err)
	}
	s.record("ClientCapOverdue", out.ConsumedCapacity)
	var ids []string
	for name, v := range out.Item {
		id, ok := strings.CutPrefix(name, clientCapOrder)
		n, isNum := v.(*types.AttributeValueMemberN)
		if !ok || !isNum {
			continue
		}
		if ms, err := strconv.ParseInt(n.Value, 10, 64); err == nil && ms <= now.UnixMilli() {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (s *Store) clientCapTake(o *ticketing.Order) *types.Update {
	c, e := o.ClientCap, newExprs()
	n, u := e.n("n"), e.n("u")
	return &types.Update{
		TableName: aws.String(s.table), Key: keyOf(clientCapPK(c.Key), skClientCap),
		UpdateExpression: aws.String("ADD " + n + " " + e.d(1) + ", " + u + " " + e.d(int64(o.Quantity)) +
			" SET " + e.n("ttl") + " = " + e.v(ttlOf(o.ExpiresAt)) + ", " + e.n(clientCapOrder+o.ID) + " = " + e.ms(o.ExpiresAt)),
		ConditionExpression: aws.String("(attribute_not_exists(" + n + ") OR " + n + " < " + e.d(int64(c.MaxOrders)) + ") AND " +
			"(attribute_not_exists(" + u + ") OR " + u + " <= " + e.d(int64(c.MaxUnits-o.Quantity)) + ")"),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}

// clientCapGiveBack returns an order's place under its client's cap (nil for an
// order of a secret key).
func (s *Store) clientCapGiveBack(o *ticketing.Order) []types.TransactWriteItem {
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
func (s *Store) AdmitClientRate(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (bool, time.Time, error) {
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
