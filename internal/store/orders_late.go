package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// ReinstateOrder: cancelled -> paid for a payment that arrived late. The
// stock is taken again as a new order would take it (tier counters within
// capacity, seats only when free) but straight to sold, with the ticket
// numbers, the outbox event and the done markers deleted; one transaction.
func (s *Orders) ReinstateOrder(ctx context.Context, o *ticketing.Order, ev *ticketing.Event, oe *ticketing.OrderEvent, now time.Time, done []ticketing.Timer) error {
	if err := s.planShards(o, ev); err != nil {
		return err
	}
	firstTicket := -1
	build := func() (*orderTxn, error) {
		tx, err := s.reinstateTxn(o, ev, oe, now, done)
		if tx != nil {
			firstTicket = tx.ticketsAt
		}
		return tx, err
	}
	err := s.takeStock(ctx, "ReinstateOrder", o, ev, build, func(_ *orderTxn, _ error, i int) error {
		if i > 0 && i >= firstTicket {
			return ticketing.ErrTicketNumberTaken
		}
		return ticketing.ErrStateChanged
	})
	if err == nil {
		o.Version++
	}
	return err
}

// reinstateTxn is ReinstateOrder's transaction.
func (s *Orders) reinstateTxn(o *ticketing.Order, ev *ticketing.Event, oe *ticketing.OrderEvent, now time.Time, done []ticketing.Timer) (*orderTxn, error) {
	e := newExprs()
	upd, err := s.orderUpdate(o, e.n("st")+" = "+e.s(string(ticketing.OrderCancelled)), e)
	if err != nil {
		return nil, err
	}
	tx := &orderTxn{items: []types.TransactWriteItem{{Update: upd}}, idemAt: -1, promoAt: -1, capAt: -1}
	if err := s.addStockItems(tx, o, ev, now, true); err != nil {
		return nil, err
	}
	if o.Promo != nil && o.Promo.Limited {
		// The buyer paid the discounted price: the use counts again on the
		// shard it was given back to, limit or not.
		tx.items = append(tx.items, promosOf(s.core).promoMove(o, 1))
	}
	tx.ticketsAt = len(tx.items)
	tx.items = append(tx.items, s.ticketPuts(o)...)
	out, err := outboxPut(s.core, oe)
	if err != nil {
		return nil, err
	}
	tx.items = append(tx.items, out)
	tx.items = append(tx.items, s.markerItems(nil, done)...)
	tx.items = append(tx.items, tallyPaid(s.table, o, now)...)
	return tx, nil
}

// ticketPuts reserves the order's ticket numbers in its environment. Each
// item also keeps what the door checks (tickets.go): the event, occurrence
// and seat of a ticket; the order-level number's item lists the tickets.
func (s *Orders) ticketPuts(o *ticketing.Order) []types.TransactWriteItem {
	items := make([]types.TransactWriteItem, 0, len(o.Tickets)+1)
	put := func(number string, extra map[string]types.AttributeValue) {
		item := map[string]types.AttributeValue{
			"PK": str(ticketPK(string(o.Environment), number)), "SK": str(skTicket), "order": str(o.ID), "org": str(o.OrganizerID),
			"ev": str(o.EventID),
		}
		if o.OccurrenceID != "" {
			item["occ"] = str(o.OccurrenceID)
		}
		maps.Copy(item, extra)
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		}})
	}
	numbers := make([]types.AttributeValue, 0, len(o.Tickets))
	for _, t := range o.Tickets {
		numbers = append(numbers, str(t.Number))
	}
	put(o.TicketNumber, map[string]types.AttributeValue{"k": str(ticketKindOrder), "tix": &types.AttributeValueMemberL{Value: numbers}})
	for _, t := range o.Tickets {
		extra := map[string]types.AttributeValue{"k": str(ticketKindTicket), "on": str(o.TicketNumber),
			"GSI3PK": str(ticketEventPK(string(o.Environment), o.EventID, shardOf(t.Number, ticketEventShards))), "GSI3SK": str(t.Number)}
		if t.Seat != nil {
			if b, err := json.Marshal(t.Seat); err == nil {
				extra["seat"] = str(string(b))
			}
		}
		put(t.Number, extra)
	}
	return items
}

// SaveOrder rewrites an order still in status expect at its version, with
// the put markers written and the done ones deleted; one transaction.
func (s *Orders) SaveOrder(ctx context.Context, o *ticketing.Order, expect ticketing.OrderStatus, put, done []ticketing.Timer) error {
	if o.Status != expect {
		return fmt.Errorf("save order %s: status %s, want %s (a save never changes it)", o.ID, o.Status, expect)
	}
	e := newExprs()
	upd, err := s.orderUpdate(o, e.n("st")+" = "+e.s(string(expect)), e)
	if err != nil {
		return err
	}
	items := append([]types.TransactWriteItem{{Update: upd}}, s.markerItems(put, done)...)
	err = s.transact(ctx, "SaveOrder", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("save order %s: %w", o.ID, err)
	}
	o.Version++
	return nil
}

// markerItems writes the put markers and deletes the done ones, each item
// once (a transaction may not touch an item twice): a marker in both is
// written, as if deleted and then put.
func (s *Orders) markerItems(put, done []ticketing.Timer) []types.TransactWriteItem {
	seen := map[string]bool{}
	var items []types.TransactWriteItem
	for _, list := range []struct {
		ts  []ticketing.Timer
		add func(*core, ticketing.Timer) types.TransactWriteItem
	}{{put, duePut}, {done, dueDelete}} {
		for _, t := range list.ts {
			k := dueID(t)
			if !seen[k] {
				seen[k] = true
				items = append(items, list.add(s.core, t))
			}
		}
	}
	return items
}
