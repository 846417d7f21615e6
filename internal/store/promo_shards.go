package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// The shards of a limited promo code's counter (ticketing.PromoShardCaps):
// shard k is the item PROMO#<code> in the stock shard partition k, so shard
// 0 is the code's former single counter in the event's stock partition
// (existing codes and orders need no migration) and an on-sale's uses of
// one code spread over the partitions its tier's shards use.
func promoKey(eventID string, env ticketing.Environment, code string, shard int) map[string]types.AttributeValue {
	return keyOf(stockShardPK(eventID, string(env), shard), promoSK(code))
}

// promoShards keeps the shards of limited codes' counters for the order
// transactions (a type of its own, so that the store types embedding core
// do not all grow by its methods).
type promoShards struct{ *core }

// promoLine marks the promo use among an order transaction's stock items.
const promoLine = -1

func promoHintKey(eventID string, env ticketing.Environment, code string) string {
	return "PROMO#" + eventID + "#" + string(env) + "#" + code
}

// promoCaps are the shard parts of the order's limited code in ev (nil: the
// event has no such limited code).
func promoCaps(o *ticketing.Order, ev *ticketing.Event) []int {
	p, ok := ev.Promo(o.Promo.Code)
	if !ok {
		return nil
	}
	return ticketing.PromoShardCaps(ev, p.MaxUses)
}

// planPromo chooses the shard an order with a limited code tries first: one
// at random among those the process has not lately seen used up. When the
// levels it saw within shardHintTTL show every shard used up, the code is
// used up without a transaction, as PromoUses says: those levels hold only
// what a consistent read, a refused condition or a committed use showed,
// never a shard merely held by another transaction (a use given back in
// another process is seen within shardHintTTL, in this one at once).
func (s promoShards) planPromo(o *ticketing.Order, ev *ticketing.Event) error {
	if o.Promo == nil || !o.Promo.Limited {
		return nil
	}
	caps := promoCaps(o, ev)
	if len(caps) == 0 {
		return ticketing.ErrPromoExhausted
	}
	shard, ok := ticketing.PickPromoShard(caps, s.shardHints.get(promoHintKey(o.EventID, o.Environment, o.Promo.Code)), -1)
	if !ok {
		return ticketing.ErrPromoExhausted
	}
	o.Promo.Shard = shard
	return nil
}

// promoTake counts one use on the order's shard of its code, under the
// shard's part of max_uses.
func (s promoShards) promoTake(o *ticketing.Order, shardCap int) *types.Update {
	e := newExprs()
	return &types.Update{
		TableName: aws.String(s.table), Key: promoKey(o.EventID, o.Environment, o.Promo.Code, o.Promo.Shard),
		UpdateExpression:         aws.String("ADD " + e.n("used") + " " + e.d(1)),
		ConditionExpression:      aws.String("attribute_not_exists(" + e.n("used") + ") OR " + e.n("used") + " < " + e.d(int64(shardCap))),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}

// promoMove adds delta uses to the order's shard of its code, whatever the
// limit: -1 gives a cancelled order's use back, +1 counts a reinstated
// order's use again (the buyer paid the discounted price). The process
// forgets the code's shard levels.
func (s promoShards) promoMove(o *ticketing.Order, delta int64) types.TransactWriteItem {
	s.shardHints.forget(promoHintKey(o.EventID, o.Environment, o.Promo.Code))
	e := newExprs()
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: promoKey(o.EventID, o.Environment, o.Promo.Code, o.Promo.Shard),
		UpdateExpression:         aws.String("ADD " + e.n("used") + " " + e.d(delta)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}}
}

// addPromoItem adds the order's use of its limited code to tx, as a stock
// item of its shard.
func (s promoShards) addPromoItem(tx *orderTxn, o *ticketing.Order, ev *ticketing.Event) error {
	if o.Promo == nil || !o.Promo.Limited {
		return nil
	}
	caps := promoCaps(o, ev)
	if o.Promo.Shard >= len(caps) {
		return ticketing.ErrPromoExhausted
	}
	tx.promoAt = len(tx.items)
	tx.stock[len(tx.items)] = stockRef{line: promoLine, shard: o.Promo.Shard}
	tx.items = append(tx.items, types.TransactWriteItem{Update: s.promoTake(o, caps[o.Promo.Shard])})
	return nil
}

// replanPromo moves the order's use to a shard with room after its shard
// refused it, on the process's fresh levels of the code (the refused shard
// counted as used up), else on a read of its shards; ErrPromoExhausted
// when none has room. A code of one shard is used up at once.
func (s promoShards) replanPromo(ctx context.Context, o *ticketing.Order, ev *ticketing.Event, refused int) error {
	caps := promoCaps(o, ev)
	if len(caps) < 2 {
		return ticketing.ErrPromoExhausted
	}
	key := promoHintKey(o.EventID, o.Environment, o.Promo.Code)
	used := s.shardHints.refused(key, refused, caps[min(refused, len(caps)-1)], 1)
	if used == nil {
		var err error
		if used, err = s.readPromoShards(ctx, o.EventID, o.Environment, o.Promo.Code, len(caps)); err != nil {
			return err
		}
		s.shardHints.put(key, used)
	}
	shard, ok := ticketing.PickPromoShard(caps, used, refused)
	if !ok {
		return ticketing.ErrPromoExhausted
	}
	o.Promo.Shard = shard
	return nil
}

// tookPromo counts a committed use in the process's fresh levels of the
// code, so that its next PromoUses sees it.
func (s promoShards) tookPromo(o *ticketing.Order, tx *orderTxn) {
	if tx.promoAt >= 0 {
		s.shardHints.add(promoHintKey(o.EventID, o.Environment, o.Promo.Code), o.Promo.Shard, 1)
	}
}

// promoHeld moves the order's use off shard busy, which another transaction
// held, to another shard with room as the process's levels of the code
// show (read now when it has none, and again when they show no other shard
// with room). The levels only hold what a consistent read, a refused
// condition or a committed use showed: a held shard is not counted as used
// up, since the transaction holding it may take one of several uses left
// or fail. When no other shard has room but busy, the order waits for busy
// (false: the caller pauses); when a consistent read shows every shard
// used up, busy included, the code is used up for this order.
func (s promoShards) promoHeld(ctx context.Context, o *ticketing.Order, ev *ticketing.Event, busy int) (bool, error) {
	caps := promoCaps(o, ev)
	if len(caps) < 2 {
		return false, nil
	}
	key := promoHintKey(o.EventID, o.Environment, o.Promo.Code)
	used := s.shardHints.get(key)
	for read := used == nil; ; read = true {
		if read {
			var err error
			if used, err = s.readPromoShards(ctx, o.EventID, o.Environment, o.Promo.Code, len(caps)); err != nil {
				return false, err
			}
			s.shardHints.put(key, used)
		}
		if shard, ok := ticketing.PickPromoShard(caps, used, busy); ok {
			o.Promo.Shard = shard
			return true, nil
		}
		if read {
			break
		}
	}
	if used[busy] < caps[busy] {
		return false, nil
	}
	return false, ticketing.ErrPromoExhausted
}

// promoGiveUp answers an order whose code's shards refused it
// shardAttempts times: used up when a consistent read shows every shard
// used up, else ErrContended (retry: other orders are taking the last uses).
func (s promoShards) promoGiveUp(ctx context.Context, o *ticketing.Order, ev *ticketing.Event) error {
	caps := promoCaps(o, ev)
	used, err := s.readPromoShards(ctx, o.EventID, o.Environment, o.Promo.Code, len(caps))
	if err != nil {
		return err
	}
	s.shardHints.put(promoHintKey(o.EventID, o.Environment, o.Promo.Code), used)
	if _, ok := ticketing.PickPromoShard(caps, used, -1); ok {
		return fmt.Errorf("promo code %s: %w: its last uses are being taken", o.Promo.Code, ticketing.ErrContended)
	}
	return ticketing.ErrPromoExhausted
}

// readPromoShards reads the uses of a code's n shards (strongly consistent).
func (s promoShards) readPromoShards(ctx context.Context, eventID string, env ticketing.Environment, code string, n int) ([]int, error) {
	keys := make([]map[string]types.AttributeValue, n)
	shardOf := make(map[string]int, n)
	for i := range keys {
		keys[i] = promoKey(eventID, env, code, i)
		shardOf[stockShardPK(eventID, string(env), i)] = i
	}
	items, err := s.batchGet(ctx, "ReadPromoShards", keys, true)
	if err != nil {
		return nil, fmt.Errorf("read the uses of promo code %s: %w", code, err)
	}
	used := make([]int, n)
	for _, item := range items {
		var it stockItem
		if err := unmarshal(item, &it); err != nil {
			return nil, err
		}
		used[shardOf[it.PK]] = it.Used
	}
	return used, nil
}

// PromoUses reads how many orders hold promo code p of e in env: a code of
// one shard from its counter (strongly consistent); one of several from
// the levels this process read within shardHintTTL (after a refusal), else
// as unused, without reading its shards (at an on-sale's rate that read
// would cost each order dozens of read units): the order's transaction,
// not this count, keeps the code within its limit, and refuses it when
// used up with the same answer.
func (s *Catalog) PromoUses(ctx context.Context, e *ticketing.Event, env ticketing.Environment, p *ticketing.Promo) (int, error) {
	if n := len(ticketing.PromoShardCaps(e, p.MaxUses)); n > 1 {
		sum := 0
		for _, u := range s.shardHints.get(promoHintKey(e.ID, env, p.Code)) {
			sum += u
		}
		return sum, nil
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: promoKey(e.ID, env, p.Code, 0),
		ConsistentRead: aws.Bool(true), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return 0, fmt.Errorf("read promo code uses: %w", err)
	}
	s.record("PromoUses", out.ConsumedCapacity)
	var it stockItem
	if err := unmarshal(out.Item, &it); err != nil {
		return 0, err
	}
	return it.Used, nil
}

func promosOf(c *core) promoShards { return promoShards{c} }
