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

// Offline doors (docs/door.md#offline-doors): every uploaded scan is one
// item SCANLOG#<env>#<org>#<client scan id> written only if absent, and an
// admission an earlier scan displaced is SCANSUP#<env>#<org>#<check-in id>,
// written in the transaction that displaces it.
const skScanLog = "SCAN"

func scanLogPK(env, org, clientScanID string) string {
	return "SCANLOG#" + env + "#" + org + "#" + clientScanID
}
func supersededPK(env, org, checkInID string) string {
	return "SCANSUP#" + env + "#" + org + "#" + checkInID
}

// TicketState reads a ticket number's item, strongly consistent.
func (s *Tickets) TicketState(ctx context.Context, env ticketing.Environment, number string) (ticketing.TicketState, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table),
		Key: keyOf(ticketPK(string(env), number), skTicket), ConsistentRead: aws.Bool(true), ReturnConsumedCapacity: s.rcc()})
	if err != nil {
		return ticketing.TicketState{}, fmt.Errorf("read ticket %s: %w", number, err)
	}
	s.record("TicketState", out.ConsumedCapacity)
	return ticketState(number, out.Item)
}

// ReplaceCheckIn makes ci the admission instead of prev, conditional on
// prev's id, and records prev as superseded, in one transaction.
func (s *Tickets) ReplaceCheckIn(ctx context.Context, t ticketing.Tenant, ci, prev ticketing.CheckIn, events []string) error {
	u, err := s.admitUpdate(t, ci, events, prev.ID)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(struct {
		ticketing.CheckIn
		SupersededBy string `json:"superseded_by"`
	}{prev, ci.ID})
	if err != nil {
		return err
	}
	sup := map[string]types.AttributeValue{"PK": str(supersededPK(string(t.Environment), t.OrganizerID, prev.ID)), "SK": str(skScanLog),
		"ticket": str(prev.TicketNumber), "doc": str(string(doc))}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: u}, {Put: &types.Put{TableName: aws.String(s.table), Item: sup}},
	}})
	if _, ok := failedItems(err); ok {
		return ticketing.ErrStateChanged // the admission changed (or a racing transaction held the item): read again
	}
	if err != nil {
		return fmt.Errorf("replace the check-in of ticket %s: %w", ci.TicketNumber, err)
	}
	return nil
}

// RecordScan puts the scan's log item unless its client id has one, which
// it then returns.
func (s *Tickets) RecordScan(ctx context.Context, t ticketing.Tenant, r ticketing.ScanRecord) (ticketing.ScanRecord, bool, error) {
	doc, err := json.Marshal(r)
	if err != nil {
		return r, false, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{"PK": str(scanLogPK(string(t.Environment), t.OrganizerID, r.ClientScanID)), "SK": str(skScanLog),
			"doc": str(string(doc))},
		ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	ccf, failed := isConditionFailed(err)
	if !failed && err != nil {
		return r, false, fmt.Errorf("record scan %s: %w", r.ClientScanID, err)
	}
	if !failed {
		return r, false, nil
	}
	var old ticketing.ScanRecord
	if err := json.Unmarshal([]byte(sAttr(ccf.Item, "doc")), &old); err != nil {
		return r, true, fmt.Errorf("decode recorded scan %s: %w", r.ClientScanID, err)
	}
	return old, true, nil
}

// admissionCursor is where a page of the admission list resumes: the shard
// of the event's index and the last ticket number read in it.
type admissionCursor struct {
	shard int
	after string
}

// AdmissionTickets reads the event's index shard by shard, each in ticket
// number order, until it holds limit+1 tickets or read every shard.
func (s *Tickets) AdmissionTickets(ctx context.Context, t ticketing.Tenant, eventID, occurrenceID string, limit int, cursor string) ([]ticketing.TicketState, string, error) {
	fp := "admission|" + string(t.Environment) + "|" + t.OrganizerID + "|" + eventID + "|" + occurrenceID
	at := admissionCursor{}
	if cursor != "" {
		key, err := s.cursor.decode(cursor, fp)
		if err != nil {
			return nil, "", err
		}
		shard, err := strconv.Atoi(sAttr(key, "s"))
		if err != nil || shard < 0 || shard >= ticketEventShards || sAttr(key, "a") == "" {
			return nil, "", invalidCursor()
		}
		at = admissionCursor{shard, sAttr(key, "a")}
	}
	var page []ticketing.TicketState
	var shards []int // the shard of each ticket of page
	for ; at.shard < ticketEventShards && len(page) <= limit; at = (admissionCursor{shard: at.shard + 1}) {
		got, err := s.admissionShard(ctx, t, eventID, occurrenceID, at, limit+1-len(page))
		if err != nil {
			return nil, "", err
		}
		for range got {
			shards = append(shards, at.shard)
		}
		page = append(page, got...)
	}
	if len(page) <= limit {
		return page, "", nil
	}
	last := page[limit-1]
	next := s.cursor.encode(map[string]types.AttributeValue{"s": str(strconv.Itoa(shards[limit-1])), "a": str(last.Number)}, fp)
	return page[:limit], next, nil
}

// admissionShard reads up to n tickets of one shard after at.after.
func (s *Tickets) admissionShard(ctx context.Context, t ticketing.Tenant, eventID, occurrenceID string, at admissionCursor, n int) ([]ticketing.TicketState, error) {
	e := newExprs()
	cond := e.n("GSI3PK") + " = " + e.s(ticketEventPK(string(t.Environment), eventID, uint32(at.shard)))
	if at.after != "" {
		cond += " AND " + e.n("GSI3SK") + " > " + e.s(at.after)
	}
	filter := e.n("org") + " = " + e.s(t.OrganizerID)
	if occurrenceID != "" {
		filter += " AND " + e.n("occ") + " = " + e.s(occurrenceID)
	}
	var out []ticketing.TicketState
	var start map[string]types.AttributeValue
	for len(out) < n {
		res, err := s.db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String("GSI3"),
			KeyConditionExpression: aws.String(cond), FilterExpression: aws.String(filter),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
			ExclusiveStartKey: start, Limit: aws.Int32(int32(min(n, 1000))), ReturnConsumedCapacity: s.rcc()})
		if err != nil {
			return nil, fmt.Errorf("admission list of %s: %w", eventID, err)
		}
		s.record("AdmissionTickets", res.ConsumedCapacity)
		for _, it := range res.Items {
			st, err := ticketState(sAttr(it, "GSI3SK"), it)
			if err != nil {
				return nil, err
			}
			if len(out) < n {
				out = append(out, st)
			}
		}
		if res.LastEvaluatedKey == nil {
			break
		}
		start = res.LastEvaluatedKey
	}
	return out, nil
}

// PutCheckInEvent writes a ticket.checked_in outbox event once (its id is
// derived from the check-in's): found by the outbox index like an order's
// event until it is fanned out.
func (s *Tickets) PutCheckInEvent(ctx context.Context, ev *ticketing.OrderEvent) error {
	put, err := outboxPut(s.core, ev)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: put.Put.TableName, Item: put.Put.Item, ConditionExpression: put.Put.ConditionExpression})
	if _, ok := isConditionFailed(err); ok {
		return nil // written before
	}
	if err != nil {
		return fmt.Errorf("write event %s: %w", ev.ID, err)
	}
	return nil
}
