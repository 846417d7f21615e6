package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// Transfers keeps ticket transfers (docs/transfers.md): a transfer's item
// TRF#<id> (TRF) holds it as a JSON document with its status (st) and a
// version; the ticket's item (tickets.go) carries the pending transfer's id
// (trf) and, once accepted, the number it was re-issued as (xf). Every
// change is one transaction over both, so a transfer, a check-in and a
// refund of one ticket exclude each other.
type Transfers struct{ *core }

// Transfers is the ticket transfers' store (a method, as Tickets).
func (s *DB) Transfers() *Transfers { return &Transfers{s.core} }

const skTransfer = "TRF"

func transferPK(id string) string { return "TRF#" + id }

var _ ticketing.TransferStore = (*Transfers)(nil)

func transferAV(tr *ticketing.Transfer, version int64) (map[string]types.AttributeValue, error) {
	doc, err := json.Marshal(tr)
	if err != nil {
		return nil, fmt.Errorf("encode transfer %s: %w", tr.ID, err)
	}
	return map[string]types.AttributeValue{
		"PK": str(transferPK(tr.ID)), "SK": str(skTransfer), "org": str(tr.OrganizerID), "env": str(string(tr.Environment)),
		"st": str(string(tr.Status)), "ver": num(strconv.FormatInt(version, 10)), "doc": str(string(doc)),
	}, nil
}

// transferUpdate rewrites a pending transfer at its version as tr.
func (s *Transfers) transferUpdate(tr *ticketing.Transfer) (*types.Put, error) {
	item, err := transferAV(tr, tr.Version+1)
	if err != nil {
		return nil, err
	}
	e := newExprs()
	return &types.Put{TableName: aws.String(s.table), Item: item,
		ConditionExpression:      aws.String(e.n("st") + " = " + e.s(string(ticketing.TransferPending)) + " AND " + e.n("ver") + " = " + e.d(tr.Version)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals}, nil
}

// ticketUpdate changes tr's ticket item under cond.
func (s *Transfers) ticketUpdate(tr *ticketing.Transfer, update, cond string, e *exprs) *types.Update {
	return &types.Update{
		TableName: aws.String(s.table), Key: keyOf(ticketPK(string(tr.Environment), tr.TicketNumber), skTicket),
		UpdateExpression: aws.String(update), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}

// CreateTransfer writes a pending transfer and its mark on the ticket.
func (s *Transfers) CreateTransfer(ctx context.Context, tr *ticketing.Transfer) error {
	item, err := transferAV(tr, 1)
	if err != nil {
		return err
	}
	e := newExprs()
	mark := s.ticketUpdate(tr, "SET "+e.n("trf")+" = "+e.s(tr.ID),
		"attribute_exists(PK) AND "+e.n("org")+" = "+e.s(tr.OrganizerID)+" AND "+e.n("k")+" = "+e.s(ticketKindTicket)+
			" AND attribute_not_exists("+e.n("cid")+") AND attribute_not_exists("+e.n("rf")+") AND attribute_not_exists("+e.n("trf")+
			") AND attribute_not_exists("+e.n("xf")+")", e)
	err = s.transact(ctx, "CreateTransfer", []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		{Update: mark},
	})
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return ticketing.ErrTicketLocked
	}
	if err != nil {
		return fmt.Errorf("create transfer of ticket %s: %w", tr.TicketNumber, err)
	}
	tr.Version = 1
	return nil
}

// GetTransfer reads a transfer (strongly consistent).
func (s *Transfers) GetTransfer(ctx context.Context, id string) (*ticketing.Transfer, error) {
	if !validID(id) {
		return nil, ticketing.NotFound("transfer")
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(transferPK(id), skTransfer), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read transfer %s: %w", id, err)
	}
	s.record("GetTransfer", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, ticketing.NotFound("transfer")
	}
	var tr ticketing.Transfer
	if tr.Version, err = docVersion(out.Item, &tr); err != nil {
		return nil, fmt.Errorf("decode transfer %s: %w", id, err)
	}
	return &tr, nil
}

// CancelTransfer writes the cancelled tr over the pending one and removes
// the ticket's mark.
func (s *Transfers) CancelTransfer(ctx context.Context, tr *ticketing.Transfer) error {
	put, err := s.transferUpdate(tr)
	if err != nil {
		return err
	}
	e := newExprs()
	unmark := s.ticketUpdate(tr, "REMOVE "+e.n("trf"), e.n("trf")+" = "+e.s(tr.ID), e)
	err = s.transact(ctx, "CancelTransfer", []types.TransactWriteItem{{Put: put}, {Update: unmark}})
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("cancel transfer %s: %w", tr.ID, err)
	}
	tr.Version++
	return nil
}

// AcceptTransfer: pending -> accepted; the old ticket transferred (it stays
// in its event's index: the admission list shows it transferred, the door's
// counts skip it); the new order, its ticket numbers and the outbox event;
// one transaction.
func (s *Transfers) AcceptTransfer(ctx context.Context, tr *ticketing.Transfer, o *ticketing.Order, ev *ticketing.OrderEvent) error {
	put, err := s.transferUpdate(tr)
	if err != nil {
		return err
	}
	e := newExprs()
	moved := s.ticketUpdate(tr, "SET "+e.n("xf")+" = "+e.s(tr.NewTicketNumber)+" REMOVE "+e.n("trf"),
		e.n("trf")+" = "+e.s(tr.ID)+" AND attribute_not_exists("+e.n("cid")+") AND attribute_not_exists("+e.n("rf")+
			") AND attribute_not_exists("+e.n("xf")+")", e)
	order, err := orderAV(o, 1)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{{Put: put}, {Update: moved},
		{Put: &types.Put{TableName: aws.String(s.table), Item: order, ConditionExpression: aws.String("attribute_not_exists(PK)")}}}
	items = append(items, (&Orders{s.core}).ticketPuts(o)...)
	out, err := outboxPut(s.core, ev)
	if err != nil {
		return err
	}
	items = append(items, out)
	err = s.transact(ctx, "AcceptTransfer", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		switch failed[0] {
		case 0:
			return ticketing.ErrStateChanged
		case 1:
			return ticketing.ErrTicketLocked
		}
		return ticketing.ErrTicketNumberTaken
	}
	if err != nil {
		return fmt.Errorf("accept transfer %s: %w", tr.ID, err)
	}
	tr.Version++
	o.Version = 1
	return nil
}
