package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// Webhook endpoints: the endpoint item, its version-conditional updates and
// the atomic health counters.

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
func (s *Webhooks) CreateEndpoint(ctx context.Context, e *webhook.Endpoint, max int) error {
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
func (s *Webhooks) GetEndpoint(ctx context.Context, id string) (*webhook.Endpoint, error) {
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
func (s *Webhooks) ListEndpoints(ctx context.Context, org string, env ticketing.Environment) ([]*webhook.Endpoint, error) {
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
func (s *Webhooks) UpdateEndpoint(ctx context.Context, e *webhook.Endpoint, resetHealth bool) error {
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
func (s *Webhooks) DeleteEndpoint(ctx context.Context, e *webhook.Endpoint) error {
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
func (s *Webhooks) EndpointFailed(ctx context.Context, id string, at time.Time) (*webhook.Endpoint, error) {
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
func (s *Webhooks) EndpointSucceeded(ctx context.Context, id string, at time.Time) error {
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
func (s *Webhooks) DisableEndpoint(ctx context.Context, id, reason string, at time.Time) (bool, error) {
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
