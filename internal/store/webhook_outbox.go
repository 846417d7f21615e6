package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/emailjobs"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The outbox: order events waiting for fan-out, the sharded sweep query and
// the dispatch transaction that writes their deliveries.

// GetOrderEvent reads an outbox event (strongly consistent); it is dispatched
// once its sparse GSI2 entry is gone.
func (s *Webhooks) GetOrderEvent(ctx context.Context, id string) (*ticketing.OrderEvent, bool, error) {
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

// outboxTime is the creation time in an outbox GSI2SK (<RFC3339Nano>#<id>).
func outboxTime(item map[string]types.AttributeValue) (time.Time, bool) {
	ts, _, _ := strings.Cut(attrS(item, "GSI2SK"), "#")
	t, err := time.Parse(time.RFC3339Nano, ts)
	return t, err == nil
}

// UndispatchedEvents queries GSI2 OUTBOX#0..63 (outboxShards). outboxPut's sort key is
// RFC3339Nano, whose trailing zeros are trimmed, so its strings order as times
// only to the second: the key condition takes every second up to olderThan's
// (GSI2SK < the next second's prefix) and the exact bound is applied to the
// parsed times. The result is the oldest up to limit over all shards.
func (s *Webhooks) UndispatchedEvents(ctx context.Context, olderThan time.Time, limit int) ([]string, error) {
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

// Dispatch puts every delivery (attribute_not_exists, version 1) and what
// the event owes its subscribers (email jobs), and marks the event dispatched
// (REMOVE its GSI2 keys, SET dsp, conditional on attribute_exists(GSI2PK)) in
// one transaction. A job that exists already (another event of the same order
// and kind wrote it) is left as it is: the transaction is tried again without it.
func (s *Webhooks) Dispatch(ctx context.Context, eventID string, ds []*webhook.Delivery, owed ...webhook.Record) error {
	jobs := make([]*emailjobs.Job, len(owed))
	for i, r := range owed {
		j, ok := r.(*emailjobs.Job)
		if !ok {
			return fmt.Errorf("dispatch event %s: the store does not keep outbox records of type %T", eventID, r)
		}
		jobs[i] = j
	}
	for {
		err := s.dispatch(ctx, eventID, ds, jobs)
		var tce *types.TransactionCanceledException
		if err == nil || !errors.As(err, &tce) {
			return err
		}
		var keep []*emailjobs.Job
		for i, j := range jobs {
			if r := tce.CancellationReasons[len(ds)+1+i]; r.Code == nil || *r.Code != "ConditionalCheckFailed" {
				keep = append(keep, j)
			}
		}
		if len(keep) == len(jobs) {
			return dispatchErr(eventID, len(ds), err)
		}
		jobs = keep
	}
}

func (s *Webhooks) dispatch(ctx context.Context, eventID string, ds []*webhook.Delivery, jobs []*emailjobs.Job) error {
	if !validID(eventID) {
		return webhook.ErrNotFound
	}
	if len(ds)+len(jobs) > maxDispatch {
		return fmt.Errorf("dispatch event %s: %d deliveries and %d email jobs, at most %d fit one transaction", eventID, len(ds), len(jobs), maxDispatch)
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
	jobItems, err := s.dispatchJobs(jobs)
	if err != nil {
		return err
	}
	items = append(items, jobItems...)
	err = s.transact(ctx, "Dispatch", items)
	if err == nil {
		for _, d := range ds {
			d.Version = 1
		}
		for _, j := range jobs {
			j.Version = 1
		}
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		return err // sorted out by Dispatch: a job that exists, or dispatchErr
	}
	return fmt.Errorf("dispatch event %s: %w", eventID, err)
}

// dispatchErr is what a cancelled dispatch means: the event is gone
// (ErrNotFound) or was dispatched already, or a delivery exists (ErrStateChanged).
func dispatchErr(eventID string, nds int, err error) error {
	var tce *types.TransactionCanceledException
	if failed, _ := failedItems(err); len(failed) > 0 && errors.As(err, &tce) {
		if r := tce.CancellationReasons[nds]; r.Code != nil && *r.Code == "ConditionalCheckFailed" && r.Item == nil {
			return webhook.ErrNotFound
		}
		return webhook.ErrStateChanged
	}
	return fmt.Errorf("dispatch event %s: %w", eventID, err)
}
