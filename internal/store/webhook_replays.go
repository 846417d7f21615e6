package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// WebhookReplays keeps webhook replays (webhook.ReplayStore): one item a
// replay, WRP#<id> / WRP, with its counters (queued, done: changed only by
// ADD, each in the transaction that writes the delivery it counts) and the
// event log cursor of its next page (changed conditionally). ttl is
// housekeeping (the deliveries' retention).
type WebhookReplays struct{ *core }

var _ webhook.ReplayStore = (*WebhookReplays)(nil)

// WebhookReplays is the replays' store (a method, as Tickets: only the
// functions that wire replays link it).
func (s *DB) WebhookReplays() *WebhookReplays { return &WebhookReplays{s.core} }

const skReplay = "WRP"

func replayPK(id string) string { return "WRP#" + id }

// cursorAV stores a cursor with a prefix, so that the first page's "" is a
// non-empty string too.
func cursorAV(c string) types.AttributeValue { return str("c:" + c) }

func replayAV(r *webhook.Replay) map[string]types.AttributeValue {
	b := func(v bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: v} }
	return map[string]types.AttributeValue{
		"PK": str(replayPK(r.ID)), "SK": str(skReplay),
		"org": str(r.OrganizerID), "env": str(string(r.Environment)), "ep": str(r.EndpointID),
		"since": num(strconv.FormatInt(r.Since.Unix(), 10)), "ik": str("k:" + r.Key),
		"queued": num(strconv.Itoa(r.Queued)), "done": num(strconv.Itoa(r.Done)), "cur": cursorAV(r.Cursor),
		"started": b(r.Started), "paged": b(r.Paged), "cre": msAV(r.CreatedAt), "upd": msAV(r.UpdatedAt),
		"ttl": num(strconv.FormatInt(r.CreatedAt.Add(deliveryRetention).Unix(), 10)),
	}
}

func replayFrom(item map[string]types.AttributeValue) *webhook.Replay {
	b := func(name string) bool {
		v, ok := item[name].(*types.AttributeValueMemberBOOL)
		return ok && v.Value
	}
	n := func(name string) int { v, _ := attrN(item, name); return int(v) }
	since, _ := attrN(item, "since")
	r := &webhook.Replay{ID: attrS(item, "PK")[len("WRP#"):], OrganizerID: attrS(item, "org"),
		Environment: ticketing.Environment(attrS(item, "env")), EndpointID: attrS(item, "ep"),
		Since: time.Unix(since, 0).UTC(), Queued: n("queued"), Done: n("done"),
		Started: b("started"), Paged: b("paged")}
	r.Key = attrS(item, "ik")[min(2, len(attrS(item, "ik"))):]
	r.Cursor = attrS(item, "cur")[min(2, len(attrS(item, "cur"))):]
	if t := attrMS(item, "cre"); t != nil {
		r.CreatedAt = *t
	}
	if t := attrMS(item, "upd"); t != nil {
		r.UpdatedAt = *t
	}
	return r
}

// CreateReplay puts r unless its id exists (the existing one and ErrStateChanged).
func (s *WebhookReplays) CreateReplay(ctx context.Context, r *webhook.Replay) (*webhook.Replay, error) {
	out, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: replayAV(r),
		ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		ReturnConsumedCapacity:              s.rcc(),
	})
	if cf, ok := isConditionFailed(err); ok {
		return replayFrom(cf.Item), webhook.ErrStateChanged
	}
	if err != nil {
		return nil, fmt.Errorf("create replay %s: %w", r.ID, err)
	}
	s.record("CreateReplay", out.ConsumedCapacity)
	return r, nil
}

// GetReplay reads a replay (strongly consistent).
func (s *WebhookReplays) GetReplay(ctx context.Context, id string) (*webhook.Replay, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(replayPK(id), skReplay), ConsistentRead: aws.Bool(true), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read replay %s: %w", id, err)
	}
	s.record("GetReplay", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, webhook.ErrNotFound
	}
	return replayFrom(out.Item), nil
}

// countReplay is the transaction item that adds 1 to a replay's counter.
func (s *WebhookReplays) countReplay(id, counter string) types.TransactWriteItem {
	x := newExprs()
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: keyOf(replayPK(id), skReplay),
		UpdateExpression:    aws.String("ADD " + x.n(counter) + " " + x.d(1)),
		ConditionExpression: aws.String("attribute_exists(PK)"), ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
	}}
}

// putDelivery is the transaction item that writes d: new (conditional on
// none existing) when d.Version is 0, else conditional on d.Version.
func (s *WebhookReplays) putDelivery(d *webhook.Delivery) (types.TransactWriteItem, error) {
	item, err := deliveryAV(d, d.Version+1)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	x := newExprs()
	put := &types.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}
	if d.Version > 0 {
		put.ConditionExpression = aws.String(x.n("ver") + " = " + x.d(d.Version))
		put.ExpressionAttributeNames, put.ExpressionAttributeValues = x.names, x.vals
	}
	return types.TransactWriteItem{Put: put}, nil
}

// writeCounted writes d with the counters' ADDs in one transaction.
func (s *WebhookReplays) writeCounted(ctx context.Context, op string, d *webhook.Delivery, counts ...types.TransactWriteItem) error {
	put, err := s.putDelivery(d)
	if err != nil {
		return err
	}
	err = s.transact(ctx, op, append([]types.TransactWriteItem{put}, counts...))
	if failed, _ := failedItems(err); len(failed) > 0 {
		if failed[0] == 0 {
			return webhook.ErrStateChanged
		}
		return fmt.Errorf("%s %s: its replay is gone: %w", op, d.ID, webhook.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, d.ID, err)
	}
	d.Version++
	return nil
}

// QueueReplayDelivery writes d with queued+1 on its replay (and done+1 on the
// replay it supersedes).
func (s *WebhookReplays) QueueReplayDelivery(ctx context.Context, d *webhook.Delivery, supersedes string) error {
	counts := []types.TransactWriteItem{s.countReplay(d.ReplayID, "queued")}
	if supersedes != "" && supersedes != d.ReplayID {
		counts = append(counts, s.countReplay(supersedes, "done"))
	}
	return s.writeCounted(ctx, "QueueReplayDelivery", d, counts...)
}

// SaveReplayDelivery saves d (conditional on its version) with done+1 on its replay.
func (s *WebhookReplays) SaveReplayDelivery(ctx context.Context, d *webhook.Delivery) error {
	return s.writeCounted(ctx, "SaveReplayDelivery", d, s.countReplay(d.ReplayID, "done"))
}

// AdvanceReplay moves the cursor from from to to (conditional on from).
func (s *WebhookReplays) AdvanceReplay(ctx context.Context, id, from, to string, last bool, now time.Time) (bool, error) {
	x := newExprs()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(replayPK(id), skReplay),
		UpdateExpression: aws.String("SET " + x.n("cur") + " = " + x.v(cursorAV(to)) + ", " + x.n("started") + " = " + x.v(&types.AttributeValueMemberBOOL{Value: true}) +
			", " + x.n("paged") + " = " + x.v(&types.AttributeValueMemberBOOL{Value: last}) + ", " + x.n("upd") + " = " + x.ms(now)),
		ConditionExpression:      aws.String(x.n("cur") + " = " + x.v(cursorAV(from)) + " AND " + x.n("paged") + " = " + x.v(&types.AttributeValueMemberBOOL{Value: false})),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
	})
	if _, ok := isConditionFailed(err); ok {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("advance replay %s: %w", id, err)
	}
	return true, nil
}
