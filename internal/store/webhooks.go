package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// Webhook persistence (the webhook.Store port): endpoints with their health
// counters and a per-environment endpoint counter, deliveries kept beside their
// outbox event (OEVT#<evt>, SK WHD#<endpoint>), the dispatch transaction, the
// sparse due index the sweep reads, and the outbound rate windows. README.md
// lists the access patterns.

var _ webhook.Store = (*Store)(nil)

const (
	// dueShards spreads the pending deliveries' due index over partitions.
	dueShards = 8
	// deliveryRetention is when DynamoDB TTL may delete a delivery (housekeeping).
	deliveryRetention = 90 * 24 * time.Hour
	// outboundKeep is when TTL may delete a one-second outbound rate window.
	outboundKeep = 5 * time.Minute
	// maxDispatch: TransactWriteItems takes 100 items, one of them the event.
	maxDispatch = 99
	// batchGetTries bounds the retries of UnprocessedKeys.
	batchGetTries = 6
)

// Attribute helpers.

func attrS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func attrN(item map[string]types.AttributeValue, name string) (int64, bool) {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	return n, err == nil
}

// attrMS reads a Unix-milliseconds attribute as a time; nil when absent.
func attrMS(item map[string]types.AttributeValue, name string) *time.Time {
	n, ok := attrN(item, name)
	if !ok {
		return nil
	}
	t := time.UnixMilli(n).UTC()
	return &t
}

func msAV(t time.Time) types.AttributeValue { return num(strconv.FormatInt(t.UnixMilli(), 10)) }

func shardOf(id string, shards uint32) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32() % shards
}

// ---- Endpoints ----

// An endpoint item: the endpoint as a JSON document (doc) without its health;
// top-level org, env, st (status), ver, the sealed secrets (sec, osec), the
// health counters cf (consecutive failures), fs (failing since), lda (last
// delivery), laa (last attempt), and dat/dr (disabled at, reason), all times in
// Unix ms. Top-level attributes win over the document when read, because
// EndpointFailed, EndpointSucceeded and DisableEndpoint change them alone.
// upd, when present, is an UpdatedAt written by DisableEndpoint.
func endpointAV(e *webhook.Endpoint, version int64) (map[string]types.AttributeValue, error) {
	c := *e
	c.Secret, c.OldSecret = "", ""
	c.ConsecutiveFailures, c.FailingSince, c.LastDeliveryAt, c.LastAttemptAt = 0, nil, nil, nil
	doc, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encode endpoint %s: %w", e.ID, err)
	}
	item := map[string]types.AttributeValue{
		"PK": str(endpointPK(e.ID)), "SK": str(skEndpoint),
		"GSI1PK": str(endpointListPK(e.OrganizerID, string(e.Environment))), "GSI1SK": str(orderSortKey(e.CreatedAt, e.ID)),
		"org": str(e.OrganizerID), "env": str(string(e.Environment)), "st": str(string(e.Status)),
		"ver": num(strconv.FormatInt(version, 10)), "doc": str(string(doc)), "sec": str(e.Secret),
		"cf": num(strconv.Itoa(e.ConsecutiveFailures)),
	}
	if e.OldSecret != "" {
		item["osec"] = str(e.OldSecret)
	}
	for name, t := range map[string]*time.Time{"fs": e.FailingSince, "lda": e.LastDeliveryAt, "laa": e.LastAttemptAt, "dat": e.DisabledAt} {
		if t != nil {
			item[name] = msAV(*t)
		}
	}
	if e.DisabledReason != "" {
		item["dr"] = str(e.DisabledReason)
	}
	return item, nil
}

func endpointFrom(item map[string]types.AttributeValue) (*webhook.Endpoint, error) {
	var e webhook.Endpoint
	if err := json.Unmarshal([]byte(attrS(item, "doc")), &e); err != nil {
		return nil, fmt.Errorf("decode endpoint %s: %w", attrS(item, "PK"), err)
	}
	e.Secret, e.OldSecret = attrS(item, "sec"), attrS(item, "osec")
	e.Status = webhook.EndpointStatus(attrS(item, "st"))
	e.Version, _ = attrN(item, "ver")
	cf, _ := attrN(item, "cf")
	e.ConsecutiveFailures = int(cf)
	e.FailingSince, e.LastDeliveryAt, e.LastAttemptAt = attrMS(item, "fs"), attrMS(item, "lda"), attrMS(item, "laa")
	e.DisabledAt, e.DisabledReason = attrMS(item, "dat"), attrS(item, "dr")
	if t := attrMS(item, "upd"); t != nil {
		e.UpdatedAt = *t
	}
	return &e, nil
}

// CreateEndpoint puts the endpoint (attribute_not_exists) and counts it on the
// environment's counter item (n < max) in one transaction.
func (s *Store) CreateEndpoint(ctx context.Context, e *webhook.Endpoint, max int) error {
	if max <= 0 {
		return webhook.ErrTooManyEndpoints
	}
	item, err := endpointAV(e, 1)
	if err != nil {
		return err
	}
	c := newExprs()
	err = s.transact(ctx, "CreateEndpoint", []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		{Update: &types.Update{
			TableName: aws.String(s.table), Key: keyOf(endpointListPK(e.OrganizerID, string(e.Environment)), skCount),
			UpdateExpression: aws.String("SET " + c.n("org") + " = " + c.s(e.OrganizerID) + ", " + c.n("env") + " = " + c.s(string(e.Environment)) +
				" ADD " + c.n("n") + " " + c.d(1)),
			ConditionExpression:      aws.String("attribute_not_exists(" + c.n("n") + ") OR " + c.n("n") + " < " + c.d(int64(max))),
			ExpressionAttributeNames: c.names, ExpressionAttributeValues: c.vals,
		}},
	})
	if err == nil {
		e.Version = 1
		return nil
	}
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		if failed[0] == 1 {
			return webhook.ErrTooManyEndpoints
		}
		return fmt.Errorf("endpoint %s exists already: %w", e.ID, webhook.ErrStateChanged)
	}
	return fmt.Errorf("create endpoint %s: %w", e.ID, err)
}

// GetEndpoint reads one endpoint (strongly consistent).
func (s *Store) GetEndpoint(ctx context.Context, id string) (*webhook.Endpoint, error) {
	if !validID(id) {
		return nil, webhook.ErrNotFound
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(endpointPK(id), skEndpoint), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read endpoint %s: %w", id, err)
	}
	s.record("GetEndpoint", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, webhook.ErrNotFound
	}
	return endpointFrom(out.Item)
}

// ListEndpoints queries GSI1 WHES#<org>#<env>, oldest first.
func (s *Store) ListEndpoints(ctx context.Context, org string, env ticketing.Environment) ([]*webhook.Endpoint, error) {
	var res []*webhook.Endpoint
	var start map[string]types.AttributeValue
	for {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(s.table), IndexName: aws.String("GSI1"),
			KeyConditionExpression:    aws.String("GSI1PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(endpointListPK(org, string(env)))},
			ExclusiveStartKey:         start, ReturnConsumedCapacity: s.rcc(),
		})
		if err != nil {
			return nil, fmt.Errorf("list endpoints of %s: %w", org, err)
		}
		s.record("ListEndpoints", out.ConsumedCapacity)
		for _, it := range out.Items {
			e, err := endpointFrom(it)
			if err != nil {
				return nil, err
			}
			res = append(res, e)
		}
		if out.LastEvaluatedKey == nil {
			return res, nil
		}
		start = out.LastEvaluatedKey
	}
}

// notFoundOr maps a failed condition to ErrNotFound when the item was absent
// (ReturnValuesOnConditionCheckFailure ALL_OLD returned nothing), else to other.
func notFoundOr(cf *types.ConditionalCheckFailedException, other error) error {
	if cf.Item == nil {
		return webhook.ErrNotFound
	}
	return other
}

// UpdateEndpoint rewrites the document, status, secrets and disabled fields
// conditional on ver = e.Version and bumps ver; the health attributes are left
// alone unless resetHealth (cf = 0, fs removed). e gets the new version and the
// stored health.
func (s *Store) UpdateEndpoint(ctx context.Context, e *webhook.Endpoint, resetHealth bool) error {
	item, err := endpointAV(e, e.Version+1)
	if err != nil {
		return err
	}
	x := newExprs()
	set := []string{}
	remove := []string{x.n("upd")}
	for _, name := range []string{"doc", "st", "sec", "ver"} {
		set = append(set, x.n(name)+" = "+x.v(item[name]))
	}
	for _, name := range []string{"osec", "dat", "dr"} {
		if v, ok := item[name]; ok {
			set = append(set, x.n(name)+" = "+x.v(v))
		} else {
			remove = append(remove, x.n(name))
		}
	}
	if resetHealth {
		set = append(set, x.n("cf")+" = "+x.d(0))
		remove = append(remove, x.n("fs"))
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(endpointPK(e.ID), skEndpoint),
		UpdateExpression:         aws.String("SET " + strings.Join(set, ", ") + " REMOVE " + strings.Join(remove, ", ")),
		ConditionExpression:      aws.String(x.n("ver") + " = " + x.d(e.Version)),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		ReturnConsumedCapacity:              s.rcc(),
	})
	if cf, ok := isConditionFailed(err); ok {
		return notFoundOr(cf, webhook.ErrStateChanged)
	}
	if err != nil {
		return fmt.Errorf("update endpoint %s: %w", e.ID, err)
	}
	s.record("UpdateEndpoint", out.ConsumedCapacity)
	stored, err := endpointFrom(out.Attributes)
	if err != nil {
		return err
	}
	e.Version = stored.Version
	e.ConsecutiveFailures, e.FailingSince = stored.ConsecutiveFailures, stored.FailingSince
	e.LastDeliveryAt, e.LastAttemptAt = stored.LastDeliveryAt, stored.LastAttemptAt
	return nil
}

// DeleteEndpoint deletes the endpoint (ver = e.Version) and frees its slot on
// the counter in one transaction.
func (s *Store) DeleteEndpoint(ctx context.Context, e *webhook.Endpoint) error {
	d, c := newExprs(), newExprs()
	err := s.transact(ctx, "DeleteEndpoint", []types.TransactWriteItem{
		{Delete: &types.Delete{
			TableName: aws.String(s.table), Key: keyOf(endpointPK(e.ID), skEndpoint),
			ConditionExpression:      aws.String(d.n("ver") + " = " + d.d(e.Version)),
			ExpressionAttributeNames: d.names, ExpressionAttributeValues: d.vals,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		{Update: &types.Update{
			TableName: aws.String(s.table), Key: keyOf(endpointListPK(e.OrganizerID, string(e.Environment)), skCount),
			UpdateExpression:         aws.String("ADD " + c.n("n") + " " + c.d(-1)),
			ExpressionAttributeNames: c.names, ExpressionAttributeValues: c.vals,
		}},
	})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if failed, _ := failedItems(err); len(failed) > 0 && errors.As(err, &tce) {
		if tce.CancellationReasons[0].Item == nil {
			return webhook.ErrNotFound
		}
		return webhook.ErrStateChanged
	}
	return fmt.Errorf("delete endpoint %s: %w", e.ID, err)
}

// EndpointFailed: ADD cf 1, fs = if_not_exists(fs, at), laa = at; returns the endpoint after it.
func (s *Store) EndpointFailed(ctx context.Context, id string, at time.Time) (*webhook.Endpoint, error) {
	if !validID(id) {
		return nil, webhook.ErrNotFound
	}
	x := newExprs()
	atv := x.ms(at)
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(endpointPK(id), skEndpoint),
		UpdateExpression: aws.String("SET " + x.n("laa") + " = " + atv + ", " + x.n("fs") + " = if_not_exists(" + x.n("fs") + ", " + atv + ")" +
			" ADD " + x.n("cf") + " " + x.d(1)),
		ConditionExpression:      aws.String("attribute_exists(PK)"),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnValues: types.ReturnValueAllNew, ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return nil, webhook.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("count failure of endpoint %s: %w", id, err)
	}
	s.record("EndpointFailed", out.ConsumedCapacity)
	return endpointFrom(out.Attributes)
}

// EndpointSucceeded: cf = 0, fs removed, lda = laa = at.
func (s *Store) EndpointSucceeded(ctx context.Context, id string, at time.Time) error {
	if !validID(id) {
		return webhook.ErrNotFound
	}
	x := newExprs()
	atv := x.ms(at)
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(endpointPK(id), skEndpoint),
		UpdateExpression: aws.String("SET " + x.n("cf") + " = " + x.d(0) + ", " + x.n("lda") + " = " + atv + ", " + x.n("laa") + " = " + atv +
			" REMOVE " + x.n("fs")),
		ConditionExpression:      aws.String("attribute_exists(PK)"),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return webhook.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("record delivery to endpoint %s: %w", id, err)
	}
	s.record("EndpointSucceeded", out.ConsumedCapacity)
	return nil
}

// DisableEndpoint: st active -> disabled with dat, dr, upd = at, ver bumped.
// false when it was not active; ErrNotFound when it does not exist.
func (s *Store) DisableEndpoint(ctx context.Context, id, reason string, at time.Time) (bool, error) {
	if !validID(id) {
		return false, webhook.ErrNotFound
	}
	x := newExprs()
	atv := x.ms(at)
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(endpointPK(id), skEndpoint),
		UpdateExpression: aws.String("SET " + x.n("st") + " = " + x.s(string(webhook.EndpointDisabled)) + ", " + x.n("dat") + " = " + atv +
			", " + x.n("dr") + " = " + x.s(reason) + ", " + x.n("upd") + " = " + atv + ", " + x.n("ver") + " = " + x.n("ver") + " + " + x.d(1)),
		ConditionExpression:      aws.String(x.n("st") + " = " + x.s(string(webhook.EndpointActive))),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		ReturnConsumedCapacity:              s.rcc(),
	})
	if cf, ok := isConditionFailed(err); ok {
		return false, notFoundOr(cf, nil)
	}
	if err != nil {
		return false, fmt.Errorf("disable endpoint %s: %w", id, err)
	}
	s.record("DisableEndpoint", out.ConsumedCapacity)
	return true, nil
}

// ---- Outbox events and dispatch ----

// GetOrderEvent reads an outbox event (strongly consistent); it is dispatched
// once its sparse GSI2 entry is gone.
func (s *Store) GetOrderEvent(ctx context.Context, id string) (*ticketing.OrderEvent, bool, error) {
	if !validID(id) {
		return nil, false, webhook.ErrNotFound
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(outboxPK(id), skEvent), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, false, fmt.Errorf("read outbox event %s: %w", id, err)
	}
	s.record("GetOrderEvent", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, false, webhook.ErrNotFound
	}
	ev, err := orderEventFrom(out.Item)
	if err != nil {
		return nil, false, err
	}
	_, undispatched := out.Item["GSI2PK"]
	return ev, !undispatched, nil
}

func orderEventFrom(item map[string]types.AttributeValue) (*ticketing.OrderEvent, error) {
	var ev ticketing.OrderEvent
	if err := json.Unmarshal([]byte(attrS(item, "doc")), &ev); err != nil {
		return nil, fmt.Errorf("decode outbox event %s: %w", attrS(item, "PK"), err)
	}
	return &ev, nil
}

// shardQuery reads a sharded, sparse index: the partitions pk(0..shards-1) of
// index with the key condition "sort key <skCond> skVal", in parallel, each up
// to perShard items that keep accepts (nil keeps all).
func (s *Store) shardQuery(ctx context.Context, op, index string, shards int, pk func(int) string, skCond, skVal string,
	perShard int, keep func(map[string]types.AttributeValue) bool) ([]map[string]types.AttributeValue, error) {
	results := make([][]map[string]types.AttributeValue, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for i := range shards {
		wg.Go(func() {
			var start map[string]types.AttributeValue
			for {
				out, err := s.db.Query(ctx, &dynamodb.QueryInput{
					TableName: aws.String(s.table), IndexName: aws.String(index),
					KeyConditionExpression: aws.String("#pk = :pk AND #sk " + skCond + " :sk"),
					ExpressionAttributeNames: map[string]string{
						"#pk": index + "PK", "#sk": index + "SK",
					},
					ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk(i)), ":sk": str(skVal)},
					ExclusiveStartKey:         start, Limit: aws.Int32(int32(min(perShard+1, 1000))),
					ReturnConsumedCapacity: s.rcc(),
				})
				if err != nil {
					errs[i] = fmt.Errorf("%s: query %s: %w", op, pk(i), err)
					return
				}
				s.record(op, out.ConsumedCapacity)
				for _, it := range out.Items {
					if keep == nil || keep(it) {
						results[i] = append(results[i], it)
					}
				}
				if len(results[i]) >= perShard || out.LastEvaluatedKey == nil {
					return
				}
				start = out.LastEvaluatedKey
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var all []map[string]types.AttributeValue
	for _, r := range results {
		all = append(all, r...)
	}
	return all, nil
}

// outboxTime is the creation time in an outbox GSI2SK (<RFC3339Nano>#<id>).
func outboxTime(item map[string]types.AttributeValue) (time.Time, bool) {
	ts, _, _ := strings.Cut(attrS(item, "GSI2SK"), "#")
	t, err := time.Parse(time.RFC3339Nano, ts)
	return t, err == nil
}

// UndispatchedEvents queries GSI2 OUTBOX#0..7. outboxPut's sort key is
// RFC3339Nano, whose trailing zeros are trimmed, so its strings order as times
// only to the second: the key condition takes every second up to olderThan's
// (GSI2SK < the next second's prefix) and the exact bound is applied to the
// parsed times. The result is the oldest up to limit over all shards.
func (s *Store) UndispatchedEvents(ctx context.Context, olderThan time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	olderThan = olderThan.UTC()
	next := olderThan.Truncate(time.Second).Add(time.Second).Format("2006-01-02T15:04:05")
	items, err := s.shardQuery(ctx, "UndispatchedEvents", "GSI2", outboxShards,
		func(i int) string { return "OUTBOX#" + strconv.Itoa(i) }, "<", next, limit,
		func(it map[string]types.AttributeValue) bool {
			t, ok := outboxTime(it)
			return ok && !t.After(olderThan)
		})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(items, func(a, b int) bool {
		ta, _ := outboxTime(items[a])
		tb, _ := outboxTime(items[b])
		return ta.Before(tb)
	})
	ids := make([]string, 0, min(len(items), limit))
	for _, it := range items {
		if len(ids) == limit {
			break
		}
		ids = append(ids, strings.TrimPrefix(attrS(it, "PK"), outboxPK("")))
	}
	return ids, nil
}

// Dispatch puts every delivery (attribute_not_exists, version 1) and marks the
// event dispatched (REMOVE its GSI2 keys, SET dsp, conditional on
// attribute_exists(GSI2PK)) in one transaction.
func (s *Store) Dispatch(ctx context.Context, eventID string, ds []*webhook.Delivery) error {
	if !validID(eventID) {
		return webhook.ErrNotFound
	}
	if len(ds) > maxDispatch {
		return fmt.Errorf("dispatch event %s: %d deliveries, at most %d fit one transaction", eventID, len(ds), maxDispatch)
	}
	items := make([]types.TransactWriteItem, 0, len(ds)+1)
	for _, d := range ds {
		if d.EventID != eventID {
			return fmt.Errorf("dispatch event %s: delivery %s belongs to event %s", eventID, d.ID, d.EventID)
		}
		av, err := deliveryAV(d, 1)
		if err != nil {
			return err
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		}})
	}
	x := newExprs()
	items = append(items, types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: keyOf(outboxPK(eventID), skEvent),
		UpdateExpression:         aws.String("REMOVE " + x.n("GSI2PK") + ", " + x.n("GSI2SK") + " SET " + x.n("dsp") + " = " + x.ms(s.clock.Now())),
		ConditionExpression:      aws.String("attribute_exists(" + x.n("GSI2PK") + ")"),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}})
	err := s.transact(ctx, "Dispatch", items)
	if err == nil {
		for _, d := range ds {
			d.Version = 1
		}
		return nil
	}
	var tce *types.TransactionCanceledException
	if failed, _ := failedItems(err); len(failed) > 0 && errors.As(err, &tce) {
		if r := tce.CancellationReasons[len(ds)]; r.Code != nil && *r.Code == "ConditionalCheckFailed" && r.Item == nil {
			return webhook.ErrNotFound
		}
		return webhook.ErrStateChanged
	}
	return fmt.Errorf("dispatch event %s: %w", eventID, err)
}

// ---- Deliveries ----

// A delivery item lives in its event's partition (OEVT#<evt>, WHD#<endpoint>):
// top-level org, env, st, ver, the JSON document (with its attempt log), the
// listing keys (GSI1 per environment, GSI2 per endpoint, newest first when read
// backwards) and, only while pending with a RecheckAt, the sharded due index
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
		"GSI1PK": str(deliveryListPK(d.OrganizerID, string(d.Environment))), "GSI1SK": str(sk),
		"GSI2PK": str(deliveryEndpointPK(d.EndpointID)), "GSI2SK": str(sk),
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
func (s *Store) GetDelivery(ctx context.Context, id string) (*webhook.Delivery, error) {
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

// LoadAttempt reads the delivery, its event and its endpoint with one
// consistent BatchGetItem (UnprocessedKeys retried).
func (s *Store) LoadAttempt(ctx context.Context, deliveryID string) (*webhook.Delivery, *ticketing.OrderEvent, *webhook.Endpoint, error) {
	dkey, evID, epID, ok := deliveryKey(deliveryID)
	if !ok {
		return nil, nil, nil, webhook.ErrNotFound
	}
	req := map[string]types.KeysAndAttributes{s.table: {
		Keys:           []map[string]types.AttributeValue{dkey, keyOf(outboxPK(evID), skEvent), keyOf(endpointPK(epID), skEndpoint)},
		ConsistentRead: aws.Bool(true),
	}}
	var got []map[string]types.AttributeValue
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt == batchGetTries {
			return nil, nil, nil, fmt.Errorf("load attempt of %s: keys still unprocessed after %d tries", deliveryID, attempt)
		}
		if attempt > 0 {
			d := time.Duration(10<<attempt) * time.Millisecond
			select {
			case <-ctx.Done():
				return nil, nil, nil, ctx.Err()
			case <-time.After(d/2 + rand.N(d)):
			}
		}
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req, ReturnConsumedCapacity: s.rcc()})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("load attempt of %s: %w", deliveryID, err)
		}
		for i := range out.ConsumedCapacity {
			s.record("LoadAttempt", &out.ConsumedCapacity[i])
		}
		got = append(got, out.Responses[s.table]...)
		req = out.UnprocessedKeys
	}
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
func (s *Store) SaveDelivery(ctx context.Context, d *webhook.Delivery) error {
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

// ListDeliveries pages newest first: by endpoint on GSI2 WHDE#<endpoint>
// (org and env checked by the filter), else on GSI1 WHDS#<org>#<env>; status
// is a filter, so a page may take more than one Query, up to the list budget:
// then the page is short (maybe empty) with has_more and a cursor. The cursor
// is signed and bound to the query.
func (s *Store) ListDeliveries(ctx context.Context, q webhook.DeliveryQuery) (*webhook.DeliveryPage, error) {
	limit := min(max(q.Limit, 1), 100)
	fingerprint := fmt.Sprintf("deliveries|%s|%s|%s|%s", q.OrganizerID, q.Environment, q.EndpointID, q.Status)
	var start map[string]types.AttributeValue
	if q.Cursor != "" {
		var err error
		if start, err = s.cursor.decode(q.Cursor, fingerprint); err != nil {
			return nil, err
		}
	}
	page := &webhook.DeliveryPage{Deliveries: []*webhook.Delivery{}}
	x := newExprs()
	index, pk := "GSI1", deliveryListPK(q.OrganizerID, string(q.Environment))
	var filters []string
	if q.EndpointID != "" {
		if !validID(q.EndpointID) {
			return page, nil
		}
		index, pk = "GSI2", deliveryEndpointPK(q.EndpointID)
		filters = append(filters, x.n("org")+" = "+x.s(q.OrganizerID), x.n("env")+" = "+x.s(string(q.Environment)))
	}
	if q.Status != "" {
		filters = append(filters, x.n("st")+" = "+x.s(string(q.Status)))
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(index),
		KeyConditionExpression:   aws.String(x.n(index+"PK") + " = " + x.s(pk)),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ScanIndexForward: aws.Bool(false),
	}
	readAhead := exact
	if len(filters) > 0 {
		in.FilterExpression = aws.String(strings.Join(filters, " AND "))
		readAhead = ahead
	}
	res, err := s.queryBounded(ctx, "ListDeliveries", in, start, limit+1, readAhead)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	items := res.items
	switch {
	case len(items) > limit:
		items = items[:limit]
		last := items[len(items)-1]
		page.HasMore = true
		page.NextCursor = s.cursor.encode(map[string]types.AttributeValue{
			"PK": last["PK"], "SK": last["SK"], index + "PK": last[index+"PK"], index + "SK": last[index+"SK"],
		}, fingerprint)
	case res.resume != nil:
		page.HasMore = true
		page.NextCursor = s.cursor.encode(res.resume, fingerprint)
	}
	for _, it := range items {
		d, err := deliveryFrom(it)
		if err != nil {
			return nil, err
		}
		page.Deliveries = append(page.Deliveries, d)
	}
	return page, nil
}

// PendingDeliveries queries GSI2 WHDE#<endpoint> filtered on st = pending, oldest first.
func (s *Store) PendingDeliveries(ctx context.Context, endpointID string, limit int) ([]*webhook.Delivery, error) {
	if limit <= 0 || !validID(endpointID) {
		return nil, nil
	}
	x := newExprs()
	keyCond := x.n("GSI2PK") + " = " + x.s(deliveryEndpointPK(endpointID))
	filter := x.n("st") + " = " + x.s(string(webhook.DeliveryPending))
	var res []*webhook.Delivery
	var start map[string]types.AttributeValue
	for {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(s.table), IndexName: aws.String("GSI2"),
			KeyConditionExpression: aws.String(keyCond), FilterExpression: aws.String(filter),
			ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
			ExclusiveStartKey: start, Limit: aws.Int32(int32(min(max(limit, 100), 1000))), ReturnConsumedCapacity: s.rcc(),
		})
		if err != nil {
			return nil, fmt.Errorf("pending deliveries of %s: %w", endpointID, err)
		}
		s.record("PendingDeliveries", out.ConsumedCapacity)
		for _, it := range out.Items {
			if len(res) == limit {
				return res, nil
			}
			d, err := deliveryFrom(it)
			if err != nil {
				return nil, err
			}
			res = append(res, d)
		}
		if len(res) == limit || out.LastEvaluatedKey == nil {
			return res, nil
		}
		start = out.LastEvaluatedKey
	}
}

// OverdueDeliveries queries the due index GSI3 WHDUE#0..7 up to now (fixed-width
// times, so strings order as times) and returns the most overdue up to limit.
func (s *Store) OverdueDeliveries(ctx context.Context, now time.Time, limit int) ([]*webhook.Delivery, error) {
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

// ---- Outbound rate windows ----

// TakeOutbound counts one request in key's one-second window item
// (ADD n 1, conditional on n < limit); a full window is (false, nil).
func (s *Store) TakeOutbound(ctx context.Context, key string, limit int, now time.Time) (bool, error) {
	if limit <= 0 {
		return false, nil
	}
	x := newExprs()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(outboundPK(key, now.Unix()), skOutbound),
		UpdateExpression: aws.String("SET " + x.n("ttl") + " = " + x.d(now.Add(outboundKeep).Unix()) +
			" ADD " + x.n("n") + " " + x.d(1)),
		ConditionExpression:      aws.String("attribute_not_exists(" + x.n("n") + ") OR " + x.n("n") + " < " + x.d(int64(limit))),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("take outbound request for %s: %w", key, err)
	}
	s.record("TakeOutbound", out.ConsumedCapacity)
	return true, nil
}
