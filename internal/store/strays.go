package store

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// Stray payments (ticketing.StrayPayment) are items of one partition,
// STRAYS / <order id>#<payment id>: rare (real money tix did not ask for),
// listed whole by the operator, and an order's found by a prefix. The bank
// files a payment under one order id, so the key is unique per payment id:
// a conditional put records each once.
const strayPK = "STRAYS"

var _ ticketing.StrayStore = (*Payments)(nil)

func straySK(orderID, paymentID string) string { return orderID + "#" + paymentID }

type strayItem struct {
	PK, SK string
	Ver    int64 `json:"ver"`
	ticketing.StrayPayment
}

func (s *Payments) strayPut(p *ticketing.StrayPayment, cond string, e *exprs) (types.TransactWriteItem, error) {
	item, err := marshal(strayItem{PK: strayPK, SK: straySK(p.OrderID, p.PaymentID), Ver: p.Version + 1, StrayPayment: *p})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("marshal stray payment %s: %w", p.PaymentID, err)
	}
	put := &types.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String(cond)}
	if len(e.names) > 0 {
		put.ExpressionAttributeNames = e.names
	}
	if len(e.vals) > 0 {
		put.ExpressionAttributeValues = e.vals
	}
	return types.TransactWriteItem{Put: put}, nil
}

// PutStray records p, with the marker of its check, unless it is recorded.
func (s *Payments) PutStray(ctx context.Context, p *ticketing.StrayPayment) (bool, error) {
	put, err := s.strayPut(p, "attribute_not_exists(PK)", newExprs())
	if err != nil {
		return false, err
	}
	items := []types.TransactWriteItem{put}
	if t, ok := p.CheckTimer(); ok {
		items = append(items, duePut(s.core, t))
	}
	err = s.transact(ctx, "PutStray", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record stray payment %s: %w", p.PaymentID, err)
	}
	p.Version++
	return true, nil
}

// SaveStray rewrites p at its Version with the markers moved.
func (s *Payments) SaveStray(ctx context.Context, p *ticketing.StrayPayment, put, done []ticketing.Timer) error {
	e := newExprs()
	w, err := s.strayPut(p, e.n("ver")+" = "+e.d(p.Version), e)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{w}
	putting := map[string]bool{}
	for _, t := range put {
		items = append(items, duePut(s.core, t))
		putting[dueID(t)] = true
	}
	for _, t := range done {
		if !putting[dueID(t)] {
			items = append(items, dueDelete(s.core, t))
		}
	}
	err = s.transact(ctx, "SaveStray", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("save stray payment %s: %w", p.PaymentID, err)
	}
	p.Version++
	return nil
}

// OrderStrays lists an order's stray payments.
func (s *Payments) OrderStrays(ctx context.Context, orderID string) ([]ticketing.StrayPayment, error) {
	e := newExprs()
	return s.queryStrays(ctx, "OrderStrays", &dynamodb.QueryInput{
		KeyConditionExpression:   aws.String(e.n("PK") + " = " + e.s(strayPK) + " AND begins_with(" + e.n("SK") + ", " + e.s(orderID+"#") + ")"),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
}

// ListStrays lists every stray payment, newest first.
func (s *Payments) ListStrays(ctx context.Context) ([]ticketing.StrayPayment, error) {
	e := newExprs()
	out, err := s.queryStrays(ctx, "ListStrays", &dynamodb.QueryInput{
		KeyConditionExpression:   aws.String(e.n("PK") + " = " + e.s(strayPK)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].DetectedAt.After(out[j].DetectedAt) })
	return out, err
}

func (s *Payments) queryStrays(ctx context.Context, op string, in *dynamodb.QueryInput) ([]ticketing.StrayPayment, error) {
	in.TableName, in.ConsistentRead, in.ReturnConsumedCapacity = aws.String(s.table), aws.Bool(true), s.rcc()
	var out []ticketing.StrayPayment
	for {
		res, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		s.record(op, res.ConsumedCapacity)
		for _, it := range res.Items {
			var si strayItem
			if err := unmarshal(it, &si); err != nil {
				return nil, fmt.Errorf("decode stray payment %s: %w", attrS(it, "SK"), err)
			}
			si.StrayPayment.Version = si.Ver
			out = append(out, si.StrayPayment)
		}
		if len(res.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}
