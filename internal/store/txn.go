package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// exprs builds expression attribute names and values with generated
// placeholders, so that no attribute name ever collides with a reserved word.
type exprs struct {
	names map[string]string
	vals  map[string]types.AttributeValue
	i     int
}

func newExprs() *exprs {
	return &exprs{names: map[string]string{}, vals: map[string]types.AttributeValue{}}
}

// n returns the placeholder of attribute name (or a dotted path of names).
func (e *exprs) n(name string) string {
	ph := "#" + name
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			e.i++
			ph = "#n" + strconv.Itoa(e.i)
			break
		}
	}
	e.names[ph] = name
	return ph
}

// v returns a fresh placeholder bound to value.
func (e *exprs) v(value types.AttributeValue) string {
	e.i++
	ph := ":v" + strconv.Itoa(e.i)
	e.vals[ph] = value
	return ph
}

func (e *exprs) s(v string) string     { return e.v(str(v)) }
func (e *exprs) d(v int64) string      { return e.v(num(strconv.FormatInt(v, 10))) }
func (e *exprs) ms(t time.Time) string { return e.d(t.UnixMilli()) }

// failedItems returns the indexes of the transaction items whose condition
// failed (DynamoDB lists a reason per item, "None" for the others), and whether
// err was a transaction cancellation at all.
func failedItems(err error) ([]int, bool) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil, false
	}
	var idx []int
	for i, r := range tce.CancellationReasons {
		if r.Code != nil && *r.Code == "ConditionalCheckFailed" {
			idx = append(idx, i)
		}
	}
	return idx, true
}

// txConflict reports a cancellation caused by a concurrent transaction on the same items.
func txConflict(err error) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return false
	}
	for _, r := range tce.CancellationReasons {
		if r.Code != nil && *r.Code == "TransactionConflict" {
			return true
		}
	}
	return false
}

// transact runs a transaction, retrying (with jittered backoff) when DynamoDB
// cancels it only because another transaction touched the same items; when
// every attempt was so cancelled, the error is also ticketing.ErrContended.
func (s *core) transact(ctx context.Context, op string, items []types.TransactWriteItem) error {
	var err error
	for attempt := range 8 {
		var out *dynamodb.TransactWriteItemsOutput
		out, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems: items, ReturnConsumedCapacity: s.rcc(),
		})
		if err == nil {
			for _, c := range out.ConsumedCapacity {
				s.record(op, &c)
			}
			return nil
		}
		if failed, _ := failedItems(err); len(failed) > 0 || !txConflict(err) {
			return err
		}
		d := time.Duration(5<<attempt) * time.Millisecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d/2 + rand.N(d)):
		}
	}
	return fmt.Errorf("%w: %w", ticketing.ErrContended, err)
}
