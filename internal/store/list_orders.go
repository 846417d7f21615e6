package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// ListOrders pages through the organizer's orders in one environment, newest
// first, on GSI1: it reads every shard of the listing (and the unsharded
// partition of older orders) and merges them. Creation bounds are key
// conditions; status and event are filters, so a filtered page may stop on the
// list budget: then it is short (maybe empty) with has_more and a cursor. The
// cursor is the sort key the next page starts below (sort keys end with the
// order id, so no two orders share one), signed and bound to the filters.
func (s *Orders) ListOrders(ctx context.Context, q ticketing.OrderQuery) (*ticketing.OrderPage, error) {
	lo, hi := orderListBounds(q)
	fingerprint := fmt.Sprintf("orders|%s|%s|%s|%s|%s|%s", q.OrganizerID, q.Environment, q.Status, q.EventID, lo, hi)
	below := ""
	if q.Cursor != "" {
		key, err := s.cursor.decode(q.Cursor, fingerprint)
		if err != nil {
			return nil, err
		}
		if below = attrS(key, "GSI1SK"); below == "" {
			return nil, invalidCursor()
		}
	}
	e := newExprs()
	pk := e.s("")
	keyCond, drop, empty := orderListKeyCondition(e, pk, lo, hi, below)
	if empty {
		return &ticketing.OrderPage{}, nil
	}
	filter := orderListFilter(q, e)
	base := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("GSI1"),
		KeyConditionExpression: aws.String(keyCond), FilterExpression: filter,
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		ScanIndexForward: aws.Bool(false),
	}
	m := s.newOrderMerge(base, pk, orderListPartitions(q.OrganizerID, string(q.Environment)), drop)
	items, next, err := m.page(ctx, q.Limit, filter != nil)
	if err != nil {
		return nil, err
	}
	page := &ticketing.OrderPage{}
	if next != "" {
		page.HasMore, page.NextCursor = true, s.cursor.encode(map[string]types.AttributeValue{"GSI1SK": str(next)}, fingerprint)
	}
	for _, it := range items {
		o, err := orderFrom(it)
		if err != nil {
			return nil, err
		}
		page.Orders = append(page.Orders, o)
	}
	return page, nil
}

// orderListBounds are the creation bounds as sort keys (lo, hi: "" when open).
// Both are inclusive at the API's precision (whole seconds): an order whose
// created_at reads 12:00:00Z is inside created_before=12:00:00Z even though it
// is stored with its sub-second digits.
func orderListBounds(q ticketing.OrderQuery) (lo, hi string) {
	if q.CreatedAfter != nil {
		lo = orderSortKey(q.CreatedAfter.Truncate(time.Second), "")
	}
	if q.CreatedBefore != nil {
		hi = orderSortKey(q.CreatedBefore.Truncate(time.Second).Add(time.Second-time.Nanosecond), "~")
	}
	return lo, hi
}

// orderListKeyCondition is the key condition of every shard (pk: the
// placeholder each shard binds to its partition): the creation bounds and,
// past the first page, below the cursor's sort key. Below the cursor with a
// lower bound is read as BETWEEN, inclusive: drop is then the cursor's sort
// key, to be left out. empty: the bounds leave nothing.
func orderListKeyCondition(e *exprs, pk, lo, hi, below string) (cond, drop string, empty bool) {
	cond = e.n("GSI1PK") + " = " + pk
	upper, inclusive := hi, true
	if below != "" && (hi == "" || below <= hi) {
		upper, inclusive = below, false
	}
	switch {
	case lo != "" && upper != "":
		if upper < lo {
			return "", "", true
		}
		if !inclusive {
			drop = upper
		}
		cond += " AND " + e.n("GSI1SK") + " BETWEEN " + e.s(lo) + " AND " + e.s(upper)
	case lo != "":
		cond += " AND " + e.n("GSI1SK") + " >= " + e.s(lo)
	case upper != "" && inclusive:
		cond += " AND " + e.n("GSI1SK") + " <= " + e.s(upper)
	case upper != "":
		cond += " AND " + e.n("GSI1SK") + " < " + e.s(upper)
	}
	return cond, drop, false
}

// orderListFilter filters on status and event (nil when neither is asked).
func orderListFilter(q ticketing.OrderQuery, e *exprs) *string {
	var filters []string
	switch q.Status {
	case "":
	case ticketing.OrderPending, ticketing.OrderCancelled:
		// A pending order past its expiry is cancelled as of now, even before a
		// timer or a read has written that down (the service applies it on read).
		pending := e.n("st") + " = " + e.s(string(ticketing.OrderPending))
		overdue := e.n("exp") + " <= " + e.ms(q.Now)
		if q.Status == ticketing.OrderPending {
			filters = append(filters, pending+" AND NOT "+overdue)
		} else {
			filters = append(filters, "("+e.n("st")+" = "+e.s(string(ticketing.OrderCancelled))+" OR ("+pending+" AND "+overdue+"))")
		}
	default:
		filters = append(filters, e.n("st")+" = "+e.s(string(q.Status)))
	}
	if q.EventID != "" {
		filters = append(filters, e.n("ev")+" = "+e.s(q.EventID))
	}
	if len(filters) == 0 {
		return nil
	}
	return aws.String(strings.Join(filters, " AND "))
}
