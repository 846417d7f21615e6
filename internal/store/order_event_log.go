package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The event log (GET /order-events): every outbox event also carries a
// listing key of its organizer and environment, written in the same put as
// the event (so in the order change's transaction), write-sharded over
// listShards by the event id: GSI3 OEVTS#<org>#<env>#<0-63> / <created, ns>#<id>.
// Outbox items use no other GSI3 entry. ttl (the deliveries' retention) is housekeeping.

func eventLogPK(org, env string, shard uint32) string {
	return "OEVTS#" + org + "#" + env + "#" + strconv.FormatUint(uint64(shard), 10)
}

func eventLogPKs(org, env string) []string {
	pks := make([]string, 0, listShards)
	for i := range uint32(listShards) {
		pks = append(pks, eventLogPK(org, env, i))
	}
	return pks
}

// eventLogKeys adds the event log's listing key and the event's ttl to its outbox item.
func eventLogKeys(ev *ticketing.OrderEvent, item map[string]types.AttributeValue) {
	item["GSI3PK"] = str(eventLogPK(ev.OrganizerID, string(ev.Environment), shardOf(ev.ID, listShards)))
	item["GSI3SK"] = str(orderSortKey(ev.CreatedAt, ev.ID))
	item["ttl"] = num(strconv.FormatInt(ev.CreatedAt.Add(deliveryRetention).Unix(), 10))
}

// ListOrderEvents pages an organizer environment's events newest first: on
// GSI3 OEVTS#<org>#<env>#<shard>, the shards merged (mergeNewest), or with an
// order id on that order's GSI1 ORDEVT#<order> (org and env checked by the
// filter). created_after bounds the sort key (inclusive); type is a filter, so
// a page may be short, with has_more and a cursor (signed, bound to the query).
func (s *Webhooks) ListOrderEvents(ctx context.Context, q webhook.EventQuery) (*webhook.EventPage, error) {
	fingerprint := fmt.Sprintf("order-events|%s|%s|%s|%s|%d", q.OrganizerID, q.Environment, q.Type, q.OrderID, q.CreatedAfter.UnixNano())
	page := &webhook.EventPage{Events: []*ticketing.OrderEvent{}}
	x := newExprs()
	mq := mergeQuery{op: "ListOrderEvents", index: "GSI3", limit: min(max(q.Limit, 1), 100),
		pks: eventLogPKs(q.OrganizerID, string(q.Environment))}
	var filters []string
	if q.OrderID != "" {
		mq.index, mq.pks = "GSI1", []string{orderEventsPK(q.OrderID)}
		filters = append(filters, x.n("org")+" = "+x.s(q.OrganizerID), x.n("env")+" = "+x.s(string(q.Environment)))
	}
	if q.Type != "" {
		filters = append(filters, x.n("type")+" = "+x.s(q.Type))
	}
	if !q.CreatedAfter.IsZero() {
		mq.above = orderSortKey(q.CreatedAfter, "") // <created>#: at or after it
	}
	var err error
	if mq.below, err = s.mergeBelow(q.Cursor, mq.index, fingerprint); err != nil {
		return nil, err
	}
	if q.OrderID != "" && !validID(q.OrderID) {
		return page, nil
	}
	if len(filters) > 0 {
		mq.filter, mq.names, mq.vals = strings.Join(filters, " AND "), x.names, x.vals
	}
	items, below, err := s.mergeNewest(ctx, mq)
	if err != nil {
		return nil, fmt.Errorf("list order events: %w", err)
	}
	page.NextCursor = s.mergeCursor(mq.index, below, fingerprint)
	page.HasMore = page.NextCursor != ""
	for _, it := range items {
		ev, err := orderEventFrom(it)
		if err != nil {
			return nil, err
		}
		page.Events = append(page.Events, ev)
	}
	return page, nil
}
