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
// first, on GSI1. Creation bounds are key conditions; status and event are
// filters, so a filtered page may take more than one Query, up to the list
// budget: then the page is short (maybe empty) with has_more and a cursor. The
// cursor is signed and bound to the filters.
func (s *Store) ListOrders(ctx context.Context, q ticketing.OrderQuery) (*ticketing.OrderPage, error) {
	e := newExprs()
	keyCond, lo, hi := orderListKeyCondition(q, e)
	filter := orderListFilter(q, e)
	fingerprint := fmt.Sprintf("orders|%s|%s|%s|%s|%s|%s", q.OrganizerID, q.Environment, q.Status, q.EventID, lo, hi)
	var start map[string]types.AttributeValue
	if q.Cursor != "" {
		var err error
		if start, err = s.cursor.decode(q.Cursor, fingerprint); err != nil {
			return nil, err
		}
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("GSI1"),
		KeyConditionExpression: aws.String(keyCond), FilterExpression: filter,
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		ScanIndexForward: aws.Bool(false),
	}
	readAhead := exact
	if filter != nil {
		readAhead = ahead
	}
	res, err := s.queryBounded(ctx, "ListOrders", in, start, q.Limit+1, readAhead)
	if err != nil {
		return nil, fmt.Errorf("list orders: %w", err)
	}
	return s.orderPage(res, q.Limit, fingerprint)
}

// orderListKeyCondition is the listing's key condition: the organizer and
// environment, and the creation bounds (lo, hi: "" when open). Both bounds are
// inclusive at the API's precision (whole seconds): an order whose created_at
// reads 12:00:00Z is inside created_before=12:00:00Z even though it is stored
// with its sub-second digits.
func orderListKeyCondition(q ticketing.OrderQuery, e *exprs) (cond, lo, hi string) {
	cond = e.n("GSI1PK") + " = " + e.s(orderListPK(q.OrganizerID, string(q.Environment)))
	if q.CreatedAfter != nil {
		lo = orderSortKey(q.CreatedAfter.Truncate(time.Second), "")
	}
	if q.CreatedBefore != nil {
		hi = orderSortKey(q.CreatedBefore.Truncate(time.Second).Add(time.Second-time.Nanosecond), "~")
	}
	switch {
	case lo != "" && hi != "":
		cond += " AND " + e.n("GSI1SK") + " BETWEEN " + e.s(lo) + " AND " + e.s(hi)
	case lo != "":
		cond += " AND " + e.n("GSI1SK") + " >= " + e.s(lo)
	case hi != "":
		cond += " AND " + e.n("GSI1SK") + " <= " + e.s(hi)
	}
	return cond, lo, hi
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

// orderPage decodes up to limit orders read, with the cursor of the next page.
func (s *Store) orderPage(res listed, limit int, fingerprint string) (*ticketing.OrderPage, error) {
	items, next := s.cut(res, limit, "GSI1PK", "GSI1SK", fingerprint)
	page := &ticketing.OrderPage{HasMore: next != "", NextCursor: next}
	for _, it := range items {
		o, err := orderFrom(it)
		if err != nil {
			return nil, err
		}
		page.Orders = append(page.Orders, o)
	}
	return page, nil
}
