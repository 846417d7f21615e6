package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// Webhook deliveries: kept beside their outbox event, read for an attempt,
// saved under their version, listed, and found by the sweep through the due index.

// A delivery item lives in its event's partition (OEVT#<evt>, WHD#<endpoint>):
// top-level org, env, st, ver, the JSON document (with its attempt log), the
// listing keys (GSI1 per environment, GSI2 per endpoint, each write-sharded
// over listShards by the delivery id; newest first when read backwards and
// merged) and, only while pending with a RecheckAt, the sharded due index
// GSI3 (the due time is read back from GSI3SK). ttl is housekeeping.
func deliveryAV(d *webhook.Delivery, version int64) (map[string]types.AttributeValue, error) {
	if want := webhook.DeliveryID(d.EventID, d.EndpointID); d.ID != want {
		return nil, fmt.Errorf("delivery id %s does not match its event and endpoint (%s)", d.ID, want)
	}
	doc, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode delivery %s: %w", d.ID, err)
	}
	sk := orderSortKey(d.CreatedAt, d.ID)
	item := map[string]types.AttributeValue{
		"PK": str(outboxPK(d.EventID)), "SK": str(deliverySK(d.EndpointID)),
		"GSI1PK": str(deliveryListShard(d.OrganizerID, string(d.Environment), shardOf(d.ID, listShards))), "GSI1SK": str(sk),
		"GSI2PK": str(deliveryEndpointShard(d.EndpointID, shardOf(d.ID, listShards))), "GSI2SK": str(sk),
		"org": str(d.OrganizerID), "env": str(string(d.Environment)), "st": str(string(d.Status)),
		"ver": num(strconv.FormatInt(version, 10)), "doc": str(string(doc)),
		"ttl": num(strconv.FormatInt(d.CreatedAt.Add(deliveryRetention).Unix(), 10)),
	}
	if d.Status == webhook.DeliveryPending && d.RecheckAt != nil {
		item["GSI3PK"] = str(deliveryDuePK(shardOf(d.ID, dueShards)))
		item["GSI3SK"] = str(orderSortKey(*d.RecheckAt, d.ID))
	}
	return item, nil
}

func deliveryFrom(item map[string]types.AttributeValue) (*webhook.Delivery, error) {
	var d webhook.Delivery
	if err := json.Unmarshal([]byte(attrS(item, "doc")), &d); err != nil {
		return nil, fmt.Errorf("decode delivery %s %s: %w", attrS(item, "PK"), attrS(item, "SK"), err)
	}
	d.Version, _ = attrN(item, "ver")
	if due, _, ok := strings.Cut(attrS(item, "GSI3SK"), "#"); ok {
		if t, err := time.Parse(time.RFC3339Nano, due); err == nil {
			t = t.UTC()
			d.RecheckAt = &t
		}
	}
	return &d, nil
}

func deliveryKey(id string) (map[string]types.AttributeValue, string, string, bool) {
	ev, ep, ok := webhook.ParseDeliveryID(id)
	if !ok {
		return nil, "", "", false
	}
	return keyOf(outboxPK(ev), deliverySK(ep)), ev, ep, true
}

// GetDelivery reads a delivery (strongly consistent).
func (s *Webhooks) GetDelivery(ctx context.Context, id string) (*webhook.Delivery, error) {
	key, _, _, ok := deliveryKey(id)
	if !ok {
		return nil, webhook.ErrNotFound
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key, ConsistentRead: aws.Bool(true), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read delivery %s: %w", id, err)
	}
	s.record("GetDelivery", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, webhook.ErrNotFound
	}
	return deliveryFrom(out.Item)
}

// LoadAttempt reads the delivery and its event with one consistent
// BatchGetItem (UnprocessedKeys retried) and, beside it, the endpoint with an
// eventually consistent GetItem: every attempt to an endpoint reads its one
// item, which at an on-sale's 5,000 attempts a second would take 5,000 RCU/s
// consistently, over a partition's 3,000, and takes 2,500 this way. An
// endpoint's change (disabled, new URL or secret) reaches attempts within
// DynamoDB's replication delay, typically well under a second; the delivery,
// whose version every save checks, is read consistently.
func (s *Webhooks) LoadAttempt(ctx context.Context, deliveryID string) (*webhook.Delivery, *ticketing.OrderEvent, *webhook.Endpoint, error) {
	dkey, evID, epID, ok := deliveryKey(deliveryID)
	if !ok {
		return nil, nil, nil, webhook.ErrNotFound
	}
	type endpointRead struct {
		item map[string]types.AttributeValue
		err  error
	}
	epc := make(chan endpointRead, 1)
	go func() {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table),
			Key: keyOf(endpointPK(epID), skEndpoint), ConsistentRead: aws.Bool(false), ReturnConsumedCapacity: s.rcc()})
		if err != nil {
			epc <- endpointRead{err: fmt.Errorf("load attempt of %s: endpoint: %w", deliveryID, err)}
			return
		}
		s.record("LoadAttempt", out.ConsumedCapacity)
		epc <- endpointRead{item: out.Item}
	}()
	got, err := s.loadDeliveryAndEvent(ctx, deliveryID, dkey, evID)
	epr := <-epc
	if err != nil {
		return nil, nil, nil, err
	}
	if epr.err != nil {
		return nil, nil, nil, epr.err
	}
	if epr.item != nil {
		got = append(got, epr.item)
	}
	return attemptFrom(got)
}

// loadDeliveryAndEvent is LoadAttempt's consistent BatchGetItem.
func (s *Webhooks) loadDeliveryAndEvent(ctx context.Context, deliveryID string, dkey map[string]types.AttributeValue, evID string) ([]map[string]types.AttributeValue, error) {
	req := map[string]types.KeysAndAttributes{s.table: {
		Keys:           []map[string]types.AttributeValue{dkey, keyOf(outboxPK(evID), skEvent)},
		ConsistentRead: aws.Bool(true),
	}}
	var got []map[string]types.AttributeValue
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt == batchGetTries {
			return nil, fmt.Errorf("load attempt of %s: keys still unprocessed after %d tries", deliveryID, attempt)
		}
		if attempt > 0 {
			d := time.Duration(10<<attempt) * time.Millisecond
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(d/2 + rand.N(d)):
			}
		}
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req, ReturnConsumedCapacity: s.rcc()})
		if err != nil {
			return nil, fmt.Errorf("load attempt of %s: %w", deliveryID, err)
		}
		for i := range out.ConsumedCapacity {
			s.record("LoadAttempt", &out.ConsumedCapacity[i])
		}
		got = append(got, out.Responses[s.table]...)
		req = out.UnprocessedKeys
	}
	return got, nil
}

// attemptFrom decodes LoadAttempt's items.
func attemptFrom(got []map[string]types.AttributeValue) (*webhook.Delivery, *ticketing.OrderEvent, *webhook.Endpoint, error) {
	var (
		d   *webhook.Delivery
		ev  *ticketing.OrderEvent
		ep  *webhook.Endpoint
		err error
	)
	for _, it := range got {
		switch sk := attrS(it, "SK"); {
		case sk == skEvent:
			ev, err = orderEventFrom(it)
		case sk == skEndpoint:
			ep, err = endpointFrom(it)
		case strings.HasPrefix(sk, deliverySK("")):
			d, err = deliveryFrom(it)
		}
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if d == nil || ev == nil {
		return nil, nil, nil, webhook.ErrNotFound
	}
	return d, ev, ep, nil
}

// SaveDelivery replaces the delivery item conditional on ver = d.Version and
// bumps d.Version; the due index entry follows the status (pending only).
func (s *Webhooks) SaveDelivery(ctx context.Context, d *webhook.Delivery) error {
	item, err := deliveryAV(d, d.Version+1)
	if err != nil {
		return err
	}
	x := newExprs()
	out, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: item,
		ConditionExpression:      aws.String(x.n("ver") + " = " + x.d(d.Version)),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		ReturnConsumedCapacity:              s.rcc(),
	})
	if cf, ok := isConditionFailed(err); ok {
		return notFoundOr(cf, webhook.ErrStateChanged)
	}
	if err != nil {
		return fmt.Errorf("save delivery %s: %w", d.ID, err)
	}
	s.record("SaveDelivery", out.ConsumedCapacity)
	d.Version++
	return nil
}

// ListDeliveries pages newest first: by endpoint on GSI2 WHDE#<endpoint>#<shard>
// (org and env checked by the filter), else on GSI1 WHDS#<org>#<env>#<shard>,
// every shard and the unsharded partition of deliveries written before the
// sharding merged (mergeNewest); status is a filter, so a page may take more
// than one Query per shard, up to the list budget: then the page is short
// (maybe empty) with has_more and a cursor. The cursor is signed and bound to
// the query.
func (s *Webhooks) ListDeliveries(ctx context.Context, q webhook.DeliveryQuery) (*webhook.DeliveryPage, error) {
	fingerprint := fmt.Sprintf("deliveries|%s|%s|%s|%s", q.OrganizerID, q.Environment, q.EndpointID, q.Status)
	page := &webhook.DeliveryPage{Deliveries: []*webhook.Delivery{}}
	x := newExprs()
	mq := mergeQuery{op: "ListDeliveries", index: "GSI1", limit: min(max(q.Limit, 1), 100),
		pks: deliveryListPKs(q.OrganizerID, string(q.Environment))}
	var filters []string
	if q.EndpointID != "" {
		if !validID(q.EndpointID) {
			if _, err := s.mergeBelow(q.Cursor, "GSI2", fingerprint); err != nil {
				return nil, err
			}
			return page, nil
		}
		mq.index, mq.pks = "GSI2", deliveryEndpointPKs(q.EndpointID)
		filters = append(filters, x.n("org")+" = "+x.s(q.OrganizerID), x.n("env")+" = "+x.s(string(q.Environment)))
	}
	if q.Status != "" {
		filters = append(filters, x.n("st")+" = "+x.s(string(q.Status)))
	}
	var err error
	if mq.below, err = s.mergeBelow(q.Cursor, mq.index, fingerprint); err != nil {
		return nil, err
	}
	if len(filters) > 0 {
		mq.filter, mq.names, mq.vals = strings.Join(filters, " AND "), x.names, x.vals
	}
	items, below, err := s.mergeNewest(ctx, mq)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	page.NextCursor = s.mergeCursor(mq.index, below, fingerprint)
	page.HasMore = page.NextCursor != ""
	for _, it := range items {
		d, err := deliveryFrom(it)
		if err != nil {
			return nil, err
		}
		page.Deliveries = append(page.Deliveries, d)
	}
	return page, nil
}

// PendingDeliveries queries GSI2 WHDE#<endpoint>#<shard> (and the unsharded
// partition) filtered on st = pending, oldest first within a shard, up to limit
// over all.
func (s *Webhooks) PendingDeliveries(ctx context.Context, endpointID string, limit int) ([]*webhook.Delivery, error) {
	if limit <= 0 || !validID(endpointID) {
		return nil, nil
	}
	var res []*webhook.Delivery
	for _, pk := range deliveryEndpointPKs(endpointID) {
		if err := s.pendingIn(ctx, pk, limit, &res); err != nil {
			return nil, fmt.Errorf("pending deliveries of %s: %w", endpointID, err)
		}
		if len(res) == limit {
			break
		}
	}
	return res, nil
}

// pendingIn adds the pending deliveries of one GSI2 partition to res, up to limit.
func (s *Webhooks) pendingIn(ctx context.Context, pk string, limit int, res *[]*webhook.Delivery) error {
	x := newExprs()
	keyCond := x.n("GSI2PK") + " = " + x.s(pk)
	filter := x.n("st") + " = " + x.s(string(webhook.DeliveryPending))
	var start map[string]types.AttributeValue
	for {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(s.table), IndexName: aws.String("GSI2"),
			KeyConditionExpression: aws.String(keyCond), FilterExpression: aws.String(filter),
			ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
			ExclusiveStartKey: start, Limit: aws.Int32(int32(min(max(limit, 100), 1000))), ReturnConsumedCapacity: s.rcc(),
		})
		if err != nil {
			return err
		}
		s.record("PendingDeliveries", out.ConsumedCapacity)
		for _, it := range out.Items {
			if len(*res) == limit {
				return nil
			}
			d, err := deliveryFrom(it)
			if err != nil {
				return err
			}
			*res = append(*res, d)
		}
		if len(*res) == limit || out.LastEvaluatedKey == nil {
			return nil
		}
		start = out.LastEvaluatedKey
	}
}

// OverdueDeliveries queries the due index GSI3 WHDUE#0..63 up to now (fixed-width
// times, so strings order as times) and returns the most overdue up to limit.
func (s *Webhooks) OverdueDeliveries(ctx context.Context, now time.Time, limit int) ([]*webhook.Delivery, error) {
	if limit <= 0 {
		return nil, nil
	}
	items, err := s.shardQuery(ctx, "OverdueDeliveries", "GSI3", dueShards,
		func(i int) string { return deliveryDuePK(uint32(i)) }, "<=", orderSortKey(now, "~"), limit, nil)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(items, func(a, b int) bool { return attrS(items[a], "GSI3SK") < attrS(items[b], "GSI3SK") })
	res := make([]*webhook.Delivery, 0, min(len(items), limit))
	for _, it := range items {
		if len(res) == limit {
			break
		}
		d, err := deliveryFrom(it)
		if err != nil {
			return nil, err
		}
		res = append(res, d)
	}
	return res, nil
}
