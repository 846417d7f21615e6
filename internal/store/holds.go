package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// housekeeping is how long after its expiry DynamoDB TTL may delete a hold, an
// idempotency record of a hold, or a held seat. Correctness never relies on it.
const housekeeping = 24 * time.Hour

func ttlOf(t time.Time) types.AttributeValue {
	return num(strconv.FormatInt(t.Add(housekeeping).Unix(), 10))
}

func idemPK(t ticketing.Tenant, scope, key string) string {
	sum := sha256.Sum256([]byte(key))
	return "IDEM#" + t.OrganizerID + "#" + string(t.Environment) + "#" + scope + "#" + hex.EncodeToString(sum[:16])
}

type idemItem struct {
	RequestHash string `json:"rh"`
	ResourceID  string `json:"rid"`
	Lease       string `json:"lease"`
	LeaseUntil  int64  `json:"lu"`
	Created     int64  `json:"cre"`
}

func idemAV(rec *ticketing.Idempotency, withTTL bool) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		"PK": str(idemPK(rec.Tenant, rec.Scope, rec.Key)), "SK": str(skIdem),
		"rh": str(rec.RequestHash), "rid": str(rec.ResourceID), "lease": str(rec.Lease),
		"lu": num(strconv.FormatInt(rec.LeaseUntil.UnixMilli(), 10)), "cre": num(strconv.FormatInt(rec.CreatedAt.UnixMilli(), 10)),
	}
	if withTTL {
		item["ttl"] = ttlOf(rec.LeaseUntil)
	}
	return item
}

func idemFrom(t ticketing.Tenant, scope, key string, item map[string]types.AttributeValue) (*ticketing.Idempotency, error) {
	var it idemItem
	if err := unmarshal(item, &it); err != nil {
		return nil, fmt.Errorf("decode idempotency record: %w", err)
	}
	return &ticketing.Idempotency{Tenant: t, Scope: scope, Key: key, RequestHash: it.RequestHash,
		ResourceID: it.ResourceID, Lease: it.Lease, LeaseUntil: time.UnixMilli(it.LeaseUntil).UTC(),
		CreatedAt: time.UnixMilli(it.Created).UTC()}, nil
}

// GetIdempotency reads an Idempotency-Key record (strongly consistent); a
// missing record is a not_found error.
func (s *Idempotency) GetIdempotency(ctx context.Context, t ticketing.Tenant, scope, key string) (*ticketing.Idempotency, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(idemPK(t, scope, key), skIdem),
		ConsistentRead: aws.Bool(true), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read idempotency key: %w", err)
	}
	s.record("GetIdempotency", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, ticketing.NotFound("idempotency key")
	}
	return idemFrom(t, scope, key, out.Item)
}

// BeginIdempotency creates the record of an order's Idempotency-Key and returns
// it, or returns the existing one with ErrIdempotencyTaken (from the failed
// condition, in the same request).
func (s *Idempotency) BeginIdempotency(ctx context.Context, rec *ticketing.Idempotency, now time.Time) (*ticketing.Idempotency, error) {
	out, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: idemAV(rec, false),
		ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		ReturnConsumedCapacity:              s.rcc(),
	})
	if cf, ok := isConditionFailed(err); ok {
		old, derr := idemFrom(rec.Tenant, rec.Scope, rec.Key, cf.Item)
		if derr != nil {
			return nil, derr
		}
		return old, ticketing.ErrIdempotencyTaken
	}
	if err != nil {
		return nil, fmt.Errorf("bind idempotency key: %w", err)
	}
	s.record("BeginIdempotency", out.ConsumedCapacity)
	return rec, nil
}

// ClaimIdempotency moves the lease from oldLease to rec's (conditional).
func (s *Idempotency) ClaimIdempotency(ctx context.Context, rec *ticketing.Idempotency, oldLease string) error {
	e := newExprs()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(idemPK(rec.Tenant, rec.Scope, rec.Key), skIdem),
		UpdateExpression:         aws.String("SET " + e.n("lease") + " = " + e.s(rec.Lease) + ", " + e.n("lu") + " = " + e.ms(rec.LeaseUntil)),
		ConditionExpression:      aws.String(e.n("lease") + " = " + e.s(oldLease)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
	if _, ok := isConditionFailed(err); ok {
		return ticketing.ErrLeaseLost
	}
	if err != nil {
		return fmt.Errorf("claim idempotency lease: %w", err)
	}
	return nil
}

// ReleaseIdempotency deletes a record whose order was never written (conditional on the lease).
func (s *Idempotency) ReleaseIdempotency(ctx context.Context, rec *ticketing.Idempotency) error {
	e := newExprs()
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: keyOf(idemPK(rec.Tenant, rec.Scope, rec.Key), skIdem),
		ConditionExpression:      aws.String(e.n("lease") + " = " + e.s(rec.Lease)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
	if _, ok := isConditionFailed(err); ok {
		return nil // someone else holds it now
	}
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// holdIPState decodes the per-IP record.
func holdIPState(item map[string]types.AttributeValue) (ticketing.HoldIPState, error) {
	var it struct {
		Holds   map[string]int64 `json:"holds"`
		Version int64            `json:"v"`
	}
	st := ticketing.HoldIPState{Holds: map[string]time.Time{}}
	if item == nil {
		return st, nil
	}
	if err := unmarshal(item, &it); err != nil {
		return st, fmt.Errorf("decode per-IP hold record: %w", err)
	}
	for id, ms := range it.Holds {
		st.Holds[id] = time.UnixMilli(ms).UTC()
	}
	st.Version = it.Version
	return st, nil
}

// AdmitHoldIP counts a publishable-key hold request against its client IP's
// fixed-window budget (one conditional write; a new window takes a second).
func (s *Limits) AdmitHoldIP(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (ticketing.HoldIPState, bool, time.Time, error) {
	win := now.UnixMilli() / window.Milliseconds()
	reset := time.UnixMilli((win + 1) * window.Milliseconds()).UTC()
	expire := num(strconv.FormatInt(now.Add(window+housekeeping).Unix(), 10))
	for range 3 {
		e := newExprs()
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: keyOf(holdIPPK(key), skHoldIP),
			UpdateExpression:         aws.String("SET " + e.n("n") + " = " + e.n("n") + " + " + e.d(1) + ", " + e.n("ttl") + " = " + e.v(expire)),
			ConditionExpression:      aws.String(e.n("w") + " = " + e.d(win) + " AND " + e.n("n") + " < " + e.d(int64(limit))),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			ReturnConsumedCapacity:              s.rcc(),
		})
		if err == nil {
			s.record("AdmitHoldIP", out.ConsumedCapacity)
			st, err := holdIPState(out.Attributes)
			return st, true, reset, err
		}
		cf, ok := isConditionFailed(err)
		if !ok {
			return ticketing.HoldIPState{}, false, reset, fmt.Errorf("count hold request: %w", err)
		}
		if w, ok := cf.Item["w"].(*types.AttributeValueMemberN); ok && w.Value == strconv.FormatInt(win, 10) {
			st, err := holdIPState(cf.Item)
			return st, false, reset, err // this window's budget is spent
		}
		e = newExprs()
		out, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: keyOf(holdIPPK(key), skHoldIP),
			UpdateExpression: aws.String("SET " + e.n("w") + " = " + e.d(win) + ", " + e.n("n") + " = " + e.d(1) + ", " +
				e.n("holds") + " = if_not_exists(" + e.n("holds") + ", " + e.v(&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}) + "), " +
				e.n("ttl") + " = " + e.v(expire)),
			ConditionExpression:      aws.String("attribute_not_exists(" + e.n("w") + ") OR " + e.n("w") + " < " + e.d(win)),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
			ReturnValues: types.ReturnValueAllNew, ReturnConsumedCapacity: s.rcc(),
		})
		if err == nil {
			s.record("AdmitHoldIP", out.ConsumedCapacity)
			st, err := holdIPState(out.Attributes)
			return st, limit >= 1, reset, err
		}
		if _, ok := isConditionFailed(err); !ok {
			return ticketing.HoldIPState{}, false, reset, fmt.Errorf("open hold rate window: %w", err)
		}
	}
	return ticketing.HoldIPState{}, false, reset, errors.New("count hold request: rate window kept moving")
}

// GetHoldIP reads the per-IP record (strongly consistent).
func (s *Limits) GetHoldIP(ctx context.Context, key string) (ticketing.HoldIPState, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(holdIPPK(key), skHoldIP), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return ticketing.HoldIPState{}, fmt.Errorf("read per-IP hold record: %w", err)
	}
	return holdIPState(out.Item)
}

// ForgetHoldIP removes a hold from its IP's active set (it was released or used).
func (s *Limits) ForgetHoldIP(ctx context.Context, key, holdID string) error {
	e := newExprs()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(holdIPPK(key), skHoldIP),
		UpdateExpression:         aws.String("REMOVE " + e.n("holds") + "." + e.n(holdID)),
		ConditionExpression:      aws.String("attribute_exists(" + e.n("holds") + ")"),
		ExpressionAttributeNames: e.names,
	})
	if _, ok := isConditionFailed(err); ok {
		return nil
	}
	if err != nil {
		return fmt.Errorf("forget hold %s for its IP: %w", holdID, err)
	}
	return nil
}

// Seat states as stored: short names, because the seating map reads them all.
const (
	seatHeld     = ticketing.SeatHeld
	seatReserved = ticketing.SeatReserved
	seatSold     = ticketing.SeatSold
)

// CreateHold takes the seats and writes the hold in one transaction (see the
// port). A seat is free when its item is absent, or held/reserved past its expiry.
func (s *Holds) CreateHold(ctx context.Context, h *ticketing.Hold, idem *ticketing.Idempotency, ip *ticketing.HoldIPUpdate, now time.Time) error {
	doc, err := json.Marshal(h)
	if err != nil {
		return err
	}
	var items []types.TransactWriteItem
	for _, seat := range h.Seats {
		e := newExprs()
		items = append(items, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: seatKey(h.EventID, h.Environment, h.OccurrenceID, seat.SeatID, seat.Block),
			UpdateExpression: aws.String("SET " + e.n("t") + " = " + e.s(seat.TierID) + ", " + e.n("st") + " = " + e.s(seatHeld) +
				", " + e.n("u") + " = " + e.ms(h.ExpiresAt) + ", " + e.n("h") + " = " + e.s(h.ID) + ", " + e.n("r") + " = " + e.s(seat.ReservationID) +
				", " + e.n("ttl") + " = " + e.v(ttlOf(h.ExpiresAt)) + " REMOVE " + e.n("o")),
			ConditionExpression:      aws.String("attribute_not_exists(PK) OR (" + e.n("st") + " <> " + e.s(seatSold) + " AND " + e.n("u") + " <= " + e.ms(now) + ")"),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureNone,
		}})
	}
	items = append(items, types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{
			"PK": str(holdPK(h.ID)), "SK": str(skHold), "org": str(h.OrganizerID), "env": str(string(h.Environment)),
			"doc": str(string(doc)), "ttl": ttlOf(h.ExpiresAt),
		},
	}})
	idemAt := -1
	if idem != nil {
		idemAt = len(items)
		e := newExprs()
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table), Item: idemAV(idem, true),
			ConditionExpression:      aws.String("attribute_not_exists(PK) OR " + e.n("lu") + " <= " + e.ms(now)),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		}})
	}
	ipAt, capAt := -1, -1
	if ip != nil {
		ipAt = len(items)
		items = append(items, types.TransactWriteItem{Update: s.holdIPUpdate(ip)})
	}
	if h.ClientCap != nil {
		capAt = len(items)
		items = append(items, types.TransactWriteItem{Update: s.clientCapHoldTake(h)})
	}
	err = s.transact(ctx, "CreateHold", items)
	if err == nil {
		return nil
	}
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		for _, i := range failed { // the idempotency record first: the caller replays it
			if i == idemAt {
				return ticketing.ErrIdempotencyTaken
			}
		}
		for _, i := range failed {
			if i < len(h.Seats) {
				return &ticketing.StockError{Index: i, Seat: true}
			}
		}
		switch failed[0] {
		case ipAt:
			return ticketing.ErrIPRace
		case capAt:
			return ticketing.ErrClientCap
		}
	}
	return fmt.Errorf("hold seats: %w", err)
}

// holdIPUpdate adds a hold to its IP's record, conditional on the version
// read (absent before the first hold), and drops the expired entries.
func (s *Holds) holdIPUpdate(ip *ticketing.HoldIPUpdate) *types.Update {
	e := newExprs()
	upd := "SET " + e.n("holds") + "." + e.n(ip.Add) + " = " + e.ms(ip.Until) + ", " + e.n("v") + " = " + e.d(ip.Version+1)
	if len(ip.Remove) > 0 {
		upd += " REMOVE "
		for i, id := range ip.Remove {
			if i > 0 {
				upd += ", "
			}
			upd += e.n("holds") + "." + e.n(id)
		}
	}
	cond := "attribute_not_exists(" + e.n("v") + ")"
	if ip.Version > 0 {
		cond = e.n("v") + " = " + e.d(ip.Version)
	}
	return &types.Update{
		TableName: aws.String(s.table), Key: keyOf(holdIPPK(ip.Key), skHoldIP),
		UpdateExpression: aws.String(upd), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	}
}

// GetHold reads a hold; a missing hold is a not_found error.
func (s *Holds) GetHold(ctx context.Context, id string) (*ticketing.Hold, error) {
	if !validID(id) {
		return nil, ticketing.NotFound("hold")
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(holdPK(id), skHold), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read hold %s: %w", id, err)
	}
	s.record("GetHold", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, ticketing.NotFound("hold")
	}
	d, ok := out.Item["doc"].(*types.AttributeValueMemberS)
	if !ok {
		return nil, fmt.Errorf("hold %s has no document", id)
	}
	var h ticketing.Hold
	if err := json.Unmarshal([]byte(d.Value), &h); err != nil {
		return nil, fmt.Errorf("decode hold %s: %w", id, err)
	}
	return &h, nil
}

// ReleaseSeat deletes a seat's item if this reservation still holds it, live,
// and then gives the seat back to its client's counter (see the port).
func (s *Holds) ReleaseSeat(ctx context.Context, h *ticketing.Hold, seat ticketing.HoldSeat, now time.Time) (bool, error) {
	e := newExprs()
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: seatKey(h.EventID, h.Environment, h.OccurrenceID, seat.SeatID, seat.Block),
		ConditionExpression: aws.String(e.n("r") + " = " + e.s(seat.ReservationID) + " AND " + e.n("st") + " = " + e.s(seatHeld) +
			" AND " + e.n("u") + " > " + e.ms(now)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
	if _, ok := isConditionFailed(err); ok {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("release seat %s: %w", seat.SeatID, err)
	}
	if h.ClientCap != nil {
		if err := s.clientCapSeatBack(ctx, h); err != nil {
			return true, err
		}
	}
	return true, nil
}
