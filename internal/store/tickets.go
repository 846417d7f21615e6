package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// A ticket number's item (TKT#<env>#<number>, TKT), written when the order
// is paid (ticketPuts), is also the ticket's door state: k is "t" for a
// ticket and "o" for an order-level number (tix lists its tickets); ev, occ
// and seat are what the door checks (on, a ticket's order-level number); a
// check-in sets ci (the CheckIn as JSON) and cid (its id); a refund sets rf
// (the refund id); a pending transfer sets trf (its id), an accepted one xf
// (the number it was re-issued as: transfers.go). A check-in requires no rf
// and no xf, a refund lock no cid, trf or xf, a transfer no cid or rf, on the
// one item: they exclude each other.
const (
	ticketKindTicket = "t"
	ticketKindOrder  = "o"
)

// admitCond is the condition a check-in is written under: no admission
// before it (prev ""), or exactly the admission prev (an earlier scan
// replacing it, checkin_offline.go).
func admitCond(e *exprs, t ticketing.Tenant, ci ticketing.CheckIn, events []string, prev string) string {
	had := "attribute_not_exists(" + e.n("cid") + ")"
	if prev != "" {
		had = e.n("cid") + " = " + e.s(prev)
	}
	cond := "attribute_exists(PK) AND " + e.n("org") + " = " + e.s(t.OrganizerID) + " AND " + e.n("k") + " = " + e.s(ticketKindTicket) +
		" AND " + had + " AND attribute_not_exists(" + e.n("rf") + ") AND attribute_not_exists(" + e.n("xf") + ")"
	if len(events) > 0 {
		in := make([]string, len(events))
		for i, ev := range events {
			in[i] = e.s(ev)
		}
		cond += " AND " + e.n("ev") + " IN (" + strings.Join(in, ", ") + ")"
	}
	if ci.OccurrenceID != "" {
		cond += " AND " + e.n("occ") + " = " + e.s(ci.OccurrenceID)
	}
	return cond
}

func (s *Tickets) admitUpdate(t ticketing.Tenant, ci ticketing.CheckIn, events []string, prev string) (*types.Update, error) {
	doc, err := json.Marshal(ci)
	if err != nil {
		return nil, err
	}
	e := newExprs()
	return &types.Update{
		TableName: aws.String(s.table), Key: keyOf(ticketPK(string(t.Environment), ci.TicketNumber), skTicket),
		UpdateExpression:         aws.String("SET " + e.n("ci") + " = " + e.s(string(doc)) + ", " + e.n("cid") + " = " + e.s(ci.ID)),
		ConditionExpression:      aws.String(admitCond(e, t, ci, events, prev)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}, nil
}

// Admit writes one check-in in one conditional UpdateItem; a refused write
// returns the item as it was (ReturnValuesOnConditionCheckFailure), so the
// door learns why without a read.
func (s *Tickets) Admit(ctx context.Context, t ticketing.Tenant, ci ticketing.CheckIn, events []string) (ticketing.TicketState, error) {
	u, err := s.admitUpdate(t, ci, events, "")
	if err != nil {
		return ticketing.TicketState{}, err
	}
	in := &dynamodb.UpdateItemInput{
		TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
		ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
		ReturnValues: types.ReturnValueAllNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		ReturnConsumedCapacity: s.rcc(),
	}
	out, err := s.db.UpdateItem(ctx, in)
	var tc *types.TransactionConflictException
	for attempt := 0; errors.As(err, &tc) && attempt < 5; attempt++ {
		// A refund's lock or an order's check-in transaction holds the item
		// this instant: the write is tried again, still one conditional write.
		select {
		case <-ctx.Done():
			return ticketing.TicketState{}, ctx.Err()
		case <-time.After(time.Duration(5<<attempt) * time.Millisecond):
		}
		out, err = s.db.UpdateItem(ctx, in)
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ticketState(ci.TicketNumber, ccf.Item)
	}
	if err != nil {
		return ticketing.TicketState{}, fmt.Errorf("check in ticket %s: %w", ci.TicketNumber, err)
	}
	s.record("Admit", out.ConsumedCapacity)
	st, err := ticketState(ci.TicketNumber, out.Attributes)
	st.Admitted = err == nil
	return st, err
}

// ticketState reads a ticket item (none: not Found).
func ticketState(number string, item map[string]types.AttributeValue) (ticketing.TicketState, error) {
	st := ticketing.TicketState{Number: number, Found: len(item) > 0}
	if !st.Found {
		return st, nil
	}
	st.OrderID, st.OrganizerID, st.EventID, st.OccurrenceID = sAttr(item, "order"), sAttr(item, "org"), sAttr(item, "ev"), sAttr(item, "occ")
	st.OrderNumber = sAttr(item, "on")
	st.RefundID, st.TransferID, st.TransferredTo = sAttr(item, "rf"), sAttr(item, "trf"), sAttr(item, "xf")
	if seat := sAttr(item, "seat"); seat != "" {
		if err := json.Unmarshal([]byte(seat), &st.Seat); err != nil {
			return st, fmt.Errorf("decode seat of ticket %s: %w", number, err)
		}
	}
	if ci := sAttr(item, "ci"); ci != "" {
		if err := json.Unmarshal([]byte(ci), &st.CheckIn); err != nil {
			return st, fmt.Errorf("decode check-in of ticket %s: %w", number, err)
		}
	}
	if sAttr(item, "k") == ticketKindOrder {
		st.Tickets = []string{}
		if l, ok := item["tix"].(*types.AttributeValueMemberL); ok {
			for _, v := range l.Value {
				if n, ok := v.(*types.AttributeValueMemberS); ok {
					st.Tickets = append(st.Tickets, n.Value)
				}
			}
		}
	}
	return st, nil
}

func sAttr(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// AdmitAll admits every check-in in one transaction, all or none.
func (s *Tickets) AdmitAll(ctx context.Context, t ticketing.Tenant, cis []ticketing.CheckIn, events []string) (bool, []int, error) {
	items := make([]types.TransactWriteItem, len(cis))
	for i, ci := range cis {
		u, err := s.admitUpdate(t, ci, events, "")
		if err != nil {
			return false, nil, err
		}
		items[i] = types.TransactWriteItem{Update: u}
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if refused, ok := failedItems(err); ok {
		return false, refused, nil // admitted or refunded before (refused), or another gate's scan raced it
	}
	if err != nil {
		return false, nil, fmt.Errorf("check in an order's tickets: %w", err)
	}
	return true, nil, nil
}

// UndoCheckIn removes check-in checkInID from a ticket of t's.
func (s *Tickets) UndoCheckIn(ctx context.Context, t ticketing.Tenant, number, checkInID string) (*ticketing.CheckIn, error) {
	e := newExprs()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(ticketPK(string(t.Environment), number), skTicket),
		UpdateExpression:         aws.String("REMOVE " + e.n("ci") + ", " + e.n("cid")),
		ConditionExpression:      aws.String(e.n("cid") + " = " + e.s(checkInID) + " AND " + e.n("org") + " = " + e.s(t.OrganizerID)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals, ReturnValues: types.ReturnValueAllOld,
	})
	if _, ok := isConditionFailed(err); ok {
		return nil, ticketing.NotFound("check-in")
	}
	if err != nil {
		return nil, fmt.Errorf("undo check-in %s: %w", checkInID, err)
	}
	st, err := ticketState(number, out.Attributes)
	if err != nil || st.CheckIn == nil {
		return nil, ticketing.NotFound("check-in")
	}
	return st.CheckIn, nil
}

// CheckIns reads the check-ins of ticket numbers (one BatchGetItem).
func (s *Tickets) CheckIns(ctx context.Context, env ticketing.Environment, numbers []string) (map[string]ticketing.CheckIn, error) {
	states, err := s.DoorStates(ctx, env, numbers)
	if err != nil {
		return nil, err
	}
	out := map[string]ticketing.CheckIn{}
	for n, st := range states {
		if st.CheckIn != nil {
			out[n] = *st.CheckIn
		}
	}
	return out, nil
}

// DoorStates reads the door state of ticket numbers (BatchGetItem, 100
// keys a request).
func (s *Tickets) DoorStates(ctx context.Context, env ticketing.Environment, numbers []string) (map[string]ticketing.TicketState, error) {
	out := map[string]ticketing.TicketState{}
	for len(numbers) > 0 {
		n := min(len(numbers), maxBatchKeys)
		keys := make([]map[string]types.AttributeValue, n)
		for i, num := range numbers[:n] {
			keys[i] = keyOf(ticketPK(string(env), num), skTicket)
		}
		items, err := s.batchGet(ctx, "TicketCheckIns", keys, true)
		if err != nil {
			return nil, fmt.Errorf("read tickets' door state: %w", err)
		}
		for _, it := range items {
			pk := sAttr(it, "PK")
			st, err := ticketState(pk[strings.LastIndex(pk, "#")+1:], it)
			if err != nil {
				return nil, err
			}
			out[st.Number] = st
		}
		numbers = numbers[n:]
	}
	return out, nil
}

// LockForRefund sets rf on every ticket of o in one transaction, unless one
// was admitted, has a transfer pending (trf) or was transferred (xf).
func (s *Tickets) LockForRefund(ctx context.Context, o *ticketing.Order, refundID string) error {
	if len(o.Tickets) == 0 {
		return nil
	}
	items := make([]types.TransactWriteItem, len(o.Tickets))
	for i, tk := range o.Tickets {
		e := newExprs()
		items[i] = types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: keyOf(ticketPK(string(o.Environment), tk.Number), skTicket),
			UpdateExpression: aws.String("SET " + e.n("rf") + " = " + e.s(refundID)),
			ConditionExpression: aws.String("attribute_exists(PK) AND attribute_not_exists(" + e.n("cid") + ") AND attribute_not_exists(" +
				e.n("trf") + ") AND attribute_not_exists(" + e.n("xf") + ") AND (attribute_not_exists(" +
				e.n("rf") + ") OR " + e.n("rf") + " = " + e.s(refundID) + ")"),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		}}
	}
	err := s.transact(ctx, "LockForRefund", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return ticketing.ErrTicketAdmitted
	}
	if err != nil {
		return fmt.Errorf("lock the tickets of order %s for its refund: %w", o.ID, err)
	}
	return nil
}

// UnlockRefund removes refundID's locks, ticket by ticket.
func (s *Tickets) UnlockRefund(ctx context.Context, o *ticketing.Order, refundID string) error {
	var errs []error
	for _, tk := range o.Tickets {
		e := newExprs()
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: keyOf(ticketPK(string(o.Environment), tk.Number), skTicket),
			UpdateExpression:         aws.String("REMOVE " + e.n("rf")),
			ConditionExpression:      aws.String(e.n("rf") + " = " + e.s(refundID)),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		})
		if _, ok := isConditionFailed(err); !ok && err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
