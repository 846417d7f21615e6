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

// conflicted returns the indexes of the transaction items DynamoDB cancelled
// because another transaction held them (TransactionConflict).
func conflicted(err error) []int {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil
	}
	var idx []int
	for i, r := range tce.CancellationReasons {
		if r.Code != nil && *r.Code == "TransactionConflict" {
			idx = append(idx, i)
		}
	}
	return idx
}

// txConflict reports a cancellation caused by a concurrent transaction on the same items.
func txConflict(err error) bool { return len(conflicted(err)) > 0 }

// txAttempts bounds the attempts of a transaction that other transactions
// keep cancelling (TransactionConflict).
const txAttempts = 8

// transact runs a transaction, retrying (with jittered backoff) when DynamoDB
// cancels it only because another transaction touched the same items; when
// every attempt was so cancelled, the error is also ticketing.ErrContended.
func (s *core) transact(ctx context.Context, op string, items []types.TransactWriteItem) error {
	var err error
	for attempt := range txAttempts {
		if err = s.transactOnce(ctx, op, items); err == nil {
			return nil
		}
		if failed, _ := failedItems(err); len(failed) > 0 || !txConflict(err) {
			return err
		}
		if err := conflictPause(ctx, s.conflictWait, attempt); err != nil {
			return err
		}
	}
	return fmt.Errorf("%w: %w", ticketing.ErrContended, err)
}

// transactOnce runs a transaction once and records its consumed capacity.
func (s *core) transactOnce(ctx context.Context, op string, items []types.TransactWriteItem) error {
	out, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: items, ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return err
	}
	for _, c := range out.ConsumedCapacity {
		s.record(op, &c)
	}
	return nil
}

// SetConflictWait sets the first wait after a transaction is cancelled for
// a conflict (default 5 ms). A test that stretches the time DynamoDB holds a
// transaction's items (testenv.ConflictProxy) stretches this wait alike.
func (s *DB) SetConflictWait(d time.Duration) { s.conflictWait = d }

// conflictPause waits before attempt+1 of a transaction cancelled for a
// conflict: 5 ms (SetConflictWait) doubled each attempt, jittered by half
// either way.
func conflictPause(ctx context.Context, base time.Duration, attempt int) error {
	if base <= 0 {
		base = 5 * time.Millisecond
	}
	d := base << attempt
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d/2 + rand.N(d)):
		return nil
	}
}
