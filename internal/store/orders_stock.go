package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// shardAttempts bounds how often an order plans its tier lines again after a
// shard refused them (each time from a fresh read of the tier's shards).
const shardAttempts = 6

// stockRef is what a stock item of an order transaction takes: a line's seat
// (shard -1) or a shard of its tier.
type stockRef struct{ line, shard int }

// orderTxn is an order transaction's items, with what each stock item takes
// and where the other conditional items are (-1: absent).
type orderTxn struct {
	items                  []types.TransactWriteItem
	stock                  map[int]stockRef
	idemAt, promoAt, capAt int
	ticketsAt              int // ReinstateOrder: the first ticket number
}

// CreateOrder writes a pending order and takes its stock in one transaction;
// ev is the event as priced (capacities, promo limits).
func (s *Orders) CreateOrder(ctx context.Context, o *ticketing.Order, ev *ticketing.Event, now time.Time) error {
	return s.CreateOrderWithKey(ctx, o, ev, nil, now)
}

// CreateOrderWithKey is CreateOrder that also writes the order's idempotency
// record (when idem is not nil) in its transaction, if the key has none.
func (s *Orders) CreateOrderWithKey(ctx context.Context, o *ticketing.Order, ev *ticketing.Event, idem *ticketing.Idempotency, now time.Time) error {
	o.Version = 1
	if err := s.planShards(o, ev); err != nil {
		return err
	}
	if err := promosOf(s.core).planPromo(o, ev); err != nil {
		return err
	}
	build := func() (*orderTxn, error) { return s.createOrderTxn(o, ev, idem, now) }
	err := s.takeStock(ctx, "CreateOrder", o, ev, build, func(tx *orderTxn, err error, i int) error {
		switch i {
		case 0:
			return ticketing.ErrOrderExists
		case tx.idemAt:
			return &ticketing.IdempotencyTakenError{Existing: oldIdem(idem, err, i)}
		case tx.promoAt:
			return ticketing.ErrPromoExhausted
		case tx.capAt:
			return ticketing.ErrClientCap
		}
		return fmt.Errorf("create order %s: %w", o.ID, err)
	})
	var se *ticketing.StockError
	if errors.As(err, &se) && idem != nil && se.KeyFree {
		return err
	}
	if se != nil {
		se.KeyFree = false // refused before any transaction said so
	}
	return err
}

// oldIdem decodes the record that made the idempotency put of a transaction
// fail (nil when DynamoDB did not return it).
func oldIdem(idem *ticketing.Idempotency, err error, i int) *ticketing.Idempotency {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || i >= len(tce.CancellationReasons) || tce.CancellationReasons[i].Item == nil {
		return nil
	}
	old, derr := idemFrom(idem.Tenant, idem.Scope, idem.Key, tce.CancellationReasons[i].Item)
	if derr != nil {
		return nil
	}
	return old
}

func (s *Orders) createOrderTxn(o *ticketing.Order, ev *ticketing.Event, idem *ticketing.Idempotency, now time.Time) (*orderTxn, error) {
	av, err := orderAV(o, 1)
	if err != nil {
		return nil, err
	}
	tx := &orderTxn{idemAt: -1, promoAt: -1, capAt: -1}
	tx.items = []types.TransactWriteItem{{Put: &types.Put{
		TableName: aws.String(s.table), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}}}
	if idem != nil {
		tx.idemAt = len(tx.items)
		tx.items = append(tx.items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table), Item: idemAV(idem, false),
			ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	}
	if err := s.addStockItems(tx, o, ev, now, false); err != nil {
		return nil, err
	}
	if err := promosOf(s.core).addPromoItem(tx, o, ev); err != nil {
		return nil, err
	}
	if o.ClientCap != nil {
		tx.capAt = len(tx.items)
		tx.items = append(tx.items, types.TransactWriteItem{Update: s.clientCapTake(o)})
	}
	tx.items = append(tx.items, duePut(s.core, o.ExpiryTimer()), tallyQuarter(s.table, o, o.CreatedAt, false))
	return tx, nil
}

// takeStock runs the transaction build makes. When a tier shard refuses a
// line, the line is planned again from a fresh read of its tier's shards and
// the transaction retried (at most shardAttempts times); a seat refused, or a
// tier without enough units left, is a *StockError; any other failed item is
// for other to name. When other transactions hold some of its items
// (TransactionConflict), a line whose shard was held moves to another shard
// at once (and the rebuilt transaction's tally items to another tally
// shard), and a transaction held up by any other item waits as transact
// waits; after 2*txAttempts such cancellations the error is ErrContended.
func (s *Orders) takeStock(ctx context.Context, op string, o *ticketing.Order, ev *ticketing.Event, build func() (*orderTxn, error), other func(tx *orderTxn, err error, i int) error) error {
	for attempt, conflicts, pauses := 0, 0, 0; ; {
		tx, err := build()
		if err != nil {
			return err
		}
		err = s.transactOnce(ctx, op, tx.items)
		if err == nil {
			promosOf(s.core).tookPromo(o, tx)
			return nil
		}
		failed, ok := failedItems(err)
		if ok && len(failed) == 0 && txConflict(err) {
			if conflicts++; conflicts >= 2*txAttempts {
				return fmt.Errorf("%s %s: %w: %w", op, o.ID, ticketing.ErrContended, err)
			}
			paused, err := avoidHeld(ctx, s.core, o, ev, tx, err, pauses, conflicts > 1)
			if err != nil {
				return err
			}
			if paused {
				pauses++
			}
			continue
		}
		if !ok || len(failed) == 0 {
			return fmt.Errorf("%s %s: %w", op, o.ID, err)
		}
		attempt++
		// Failed items come in transaction order; a stock item's failure
		// reported with no earlier one means the key's record (when there is
		// one) was free in this attempt.
		for _, i := range failed {
			ref, isStock := tx.stock[i]
			switch {
			case !isStock:
				return other(tx, err, i)
			case ref.line == promoLine && attempt > shardAttempts:
				return promosOf(s.core).promoGiveUp(ctx, o, ev)
			case ref.line == promoLine:
				if err := promosOf(s.core).replanPromo(ctx, o, ev, ref.shard); err != nil {
					return err
				}
				continue
			case ref.shard < 0:
				return &ticketing.StockError{Index: ref.line, Seat: true, KeyFree: true}
			case attempt > shardAttempts:
				return &ticketing.StockError{Index: ref.line, KeyFree: true}
			}
			if err := s.replanLine(ctx, o, ev, ref.line, ref.shard); err != nil {
				return err
			}
		}
	}
}

// avoidHeld prepares the next attempt of a transaction cancelled because
// other transactions held some of its items: each line whose shard was held
// moves to another shard with room (as far as this process knows); when an
// item other than a shard or a tally item was held, or no line could move,
// it waits as transact waits before its attempt+1, and reports that it did.
// A promo code's shard held again (again: not the order's first conflict)
// moves and waits: when a code's last uses are on a few shards, the orders
// after them would otherwise spend their attempts hopping among held shards.
func avoidHeld(ctx context.Context, s *core, o *ticketing.Order, ev *ticketing.Event, tx *orderTxn, err error, attempt int, again bool) (bool, error) {
	stuck := false
	for _, i := range conflicted(err) {
		if i >= len(tx.items) {
			continue
		}
		if ref, isStock := tx.stock[i]; isStock && ref.line == promoLine {
			moved, err := promosOf(s).promoHeld(ctx, o, ev, ref.shard)
			if err != nil {
				return false, err
			}
			stuck = stuck || !moved || again
			continue
		}
		if ref, isStock := tx.stock[i]; isStock {
			stuck = stuck || ref.shard < 0 || !moveLine(&s.shardHints, o, ev, ref.line, ref.shard)
			continue
		}
		stuck = stuck || !isTally(tx.items[i])
	}
	if !stuck {
		return false, nil
	}
	return true, conflictPause(ctx, s.conflictWait, attempt)
}

// isTally reports a sales-tally update (its shard is picked anew each time a
// transaction is built).
func isTally(it types.TransactWriteItem) bool {
	if it.Update == nil {
		return false
	}
	pk, ok := it.Update.Key["PK"].(*types.AttributeValueMemberS)
	return ok && (strings.HasPrefix(pk.Value, "TALLY#") || strings.HasPrefix(pk.Value, "TALLYE#"))
}

// moveLine plans line i again from a random shard other than busy, on the
// shard levels this process saw last (none: every shard has room; the
// transaction's conditions decide). It reports whether the line moved.
func moveLine(hints *shardHints, o *ticketing.Order, ev *ticketing.Event, i, busy int) bool {
	l := &o.Lines[i]
	t, ok := ev.Tier(l.TierID)
	if !ok {
		return false
	}
	caps := ticketing.TierShardCaps(ev, t.Capacity)
	if len(caps) < 2 {
		return false
	}
	start := (busy + 1 + ticketing.RandomShard(len(caps)-1)) % len(caps)
	takes, ok := ticketing.PlanTake(caps, hints.get(hintKey(o, l.TierID)), l.Quantity, start)
	if !ok || len(takes) == 1 && takes[0].Shard == busy {
		return false
	}
	l.Shards = takes
	return true
}

// addStockItems takes each line's stock: a seat (see the port for the
// condition of a seat with a reservation) or the planned shards of its tier,
// none past its cap. sell takes seats straight to sold (a reinstated order)
// instead of reserved until the order's expiry.
func (s *Orders) addStockItems(tx *orderTxn, o *ticketing.Order, ev *ticketing.Event, now time.Time, sell bool) error {
	tx.stock = map[int]stockRef{}
	for i, l := range o.Lines {
		if l.Seated {
			tx.stock[len(tx.items)] = stockRef{line: i, shard: -1}
			tx.items = append(tx.items, types.TransactWriteItem{Update: s.seatTake(o, l, now, sell)})
			continue
		}
		t, ok := ev.Tier(l.TierID)
		if !ok {
			return &ticketing.StockError{Index: i}
		}
		caps := ticketing.TierShardCaps(ev, t.Capacity)
		for _, take := range l.Takes() {
			if take.Shard >= len(caps) {
				return &ticketing.StockError{Index: i}
			}
			tx.stock[len(tx.items)] = stockRef{line: i, shard: take.Shard}
			tx.items = append(tx.items, types.TransactWriteItem{Update: s.shardTake(o, l.TierID, take, caps[take.Shard])})
		}
	}
	return nil
}

// seatTake takes a line's seat, reserved until the order's expiry (sell: sold).
func (s *Orders) seatTake(o *ticketing.Order, l ticketing.OrderLine, now time.Time, sell bool) *types.Update {
	e := newExprs()
	cond := seatTakeCond(e, o, l, now, sell)
	set := "SET " + e.n("t") + " = " + e.s(l.TierID) + ", " + e.n("o") + " = " + e.s(o.ID) + ", " + e.n("st") + " = "
	if sell {
		set += e.s(seatSold) + " REMOVE " + e.n("u") + ", " + e.n("ttl") + ", " + e.n("r")
	} else {
		set += e.s(seatReserved) + ", " + e.n("u") + " = " + e.ms(o.ExpiresAt) + ", " + e.n("ttl") + " = " + e.v(ttlOf(o.ExpiresAt))
	}
	return &types.Update{
		TableName: aws.String(s.table), Key: lineSeatKey(o, l),
		UpdateExpression:         aws.String(set),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}
