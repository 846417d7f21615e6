package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

// WaitingRoom is the waiting room's store (waitroom.Store;
// docs/waiting-room.md): the protection on its event's partition, one item
// per answered challenge, sharded join counters per join-time bucket, one
// item per spent admission. No item is shared by every visitor.
type WaitingRoom struct{ *core }

// WaitingRoom returns the waiting room's store.
func (s *DB) WaitingRoom() *WaitingRoom { return &WaitingRoom{s.core} }

const skQueue = "QUEUE"

func answerPK(id string) string                { return "QANS#" + id }
func admissionPK(id string) string             { return "QADM#" + id }
func joinPK(event string, shard int) string    { return "QJOIN#" + event + "#" + strconv.Itoa(shard) }
func joinSK(bucket int) string                 { return fmt.Sprintf("B#%09d", bucket) }
func unixMS(av types.AttributeValue) time.Time { return time.UnixMilli(intOf(av)).UTC() }

func intOf(av types.AttributeValue) int64 {
	n, _ := numOf(av)
	return n
}

func strOf(av types.AttributeValue) string {
	s, _ := av.(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

func ms(t time.Time) types.AttributeValue { return num(strconv.FormatInt(t.UnixMilli(), 10)) }

// PutProtection writes p on its event (EVT#<event>, QUEUE), on condition
// that no other organizer's protection is there.
func (s *WaitingRoom) PutProtection(ctx context.Context, p waitroom.Protection) error {
	item := map[string]types.AttributeValue{"PK": str(eventPK(p.EventID)), "SK": str(skQueue), "org": str(p.OrganizerID),
		"env": str(string(p.Environment)), "occ": str(p.OccurrenceID), "opens": ms(p.OpensAt), "rate": num(strconv.Itoa(p.Rate)),
		"bits": num(strconv.Itoa(p.Difficulty)), "cre": ms(p.CreatedAt)}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item,
		ConditionExpression:       aws.String("attribute_not_exists(PK) OR org = :org"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":org": str(p.OrganizerID)}})
	if _, ok := isConditionFailed(err); ok {
		return ticketing.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("write protection: %w", err)
	}
	return nil
}

// GetProtection reads an event's protection (consistent).
func (s *WaitingRoom) GetProtection(ctx context.Context, eventID string) (*waitroom.Protection, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: keyOf(eventPK(eventID), skQueue), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read protection: %w", err)
	}
	it := out.Item
	if it == nil {
		return nil, ticketing.NotFound("protection")
	}
	return &waitroom.Protection{EventID: eventID, OccurrenceID: strOf(it["occ"]),
		Tenant:  ticketing.Tenant{OrganizerID: strOf(it["org"]), Environment: ticketing.Environment(strOf(it["env"]))},
		OpensAt: unixMS(it["opens"]), Rate: int(intOf(it["rate"])), Difficulty: int(intOf(it["bits"])), CreatedAt: unixMS(it["cre"])}, nil
}

// RecordAnswer puts the challenge's item once (attribute_not_exists).
func (s *WaitingRoom) RecordAnswer(ctx context.Context, id string, expires time.Time) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table),
		Item:                map[string]types.AttributeValue{"PK": str(answerPK(id)), "SK": str("QANS"), "ttl": ttlOf(expires)},
		ConditionExpression: aws.String("attribute_not_exists(PK)")})
	if _, ok := isConditionFailed(err); ok {
		return waitroom.ErrAnswerUsed
	}
	if err != nil {
		return fmt.Errorf("record answer: %w", err)
	}
	return nil
}

// CountJoin adds one to a join counter (ADD n 1, no condition).
func (s *WaitingRoom) CountJoin(ctx context.Context, eventID string, shard, bucket int, expires time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: keyOf(joinPK(eventID, shard), joinSK(bucket)),
		UpdateExpression:          aws.String("ADD n :one SET #ttl = :ttl"),
		ExpressionAttributeNames:  map[string]string{"#ttl": "ttl"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": num("1"), ":ttl": ttlOf(expires)}})
	if err != nil {
		return fmt.Errorf("count join: %w", err)
	}
	return nil
}

// JoinCounts queries every shard's partition from bucket from on, in
// parallel, and sums the buckets up to to.
func (s *WaitingRoom) JoinCounts(ctx context.Context, eventID string, shards, from, to int) (map[int]int, error) {
	items, err := s.shardQuery(ctx, "join counts", "", shards, func(i int) string { return joinPK(eventID, i) }, ">=", joinSK(from), 100000,
		func(it map[string]types.AttributeValue) bool { return strOf(it["SK"]) <= joinSK(to) })
	if err != nil {
		return nil, err
	}
	out := map[int]int{}
	for _, it := range items {
		b, err := strconv.Atoi(strings.TrimPrefix(strOf(it["SK"]), "B#"))
		if err != nil {
			continue
		}
		out[b] += int(intOf(it["n"]))
	}
	return out, nil
}

// ClaimAdmission puts the admission's spend: once, or again by the same claim.
func (s *WaitingRoom) ClaimAdmission(ctx context.Context, id, claim string, expires time.Time) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table),
		Item:                      map[string]types.AttributeValue{"PK": str(admissionPK(id)), "SK": str("QADM"), "claim": str(claim), "ttl": ttlOf(expires)},
		ConditionExpression:       aws.String("attribute_not_exists(PK) OR claim = :claim"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":claim": str(claim)}})
	if _, ok := isConditionFailed(err); ok {
		return waitroom.ErrAdmissionSpent
	}
	if err != nil {
		return fmt.Errorf("spend admission: %w", err)
	}
	return nil
}

// ReleaseAdmission deletes the spend when claim holds it.
func (s *WaitingRoom) ReleaseAdmission(ctx context.Context, id, claim string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: keyOf(admissionPK(id), "QADM"),
		ConditionExpression:       aws.String("claim = :claim"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":claim": str(claim)}})
	if _, ok := isConditionFailed(err); ok || err == nil {
		return nil
	}
	return fmt.Errorf("release admission: %w", err)
}

// AdmissionSpent reads the spend (consistent).
func (s *WaitingRoom) AdmissionSpent(ctx context.Context, id string) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: keyOf(admissionPK(id), "QADM"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, fmt.Errorf("read admission: %w", err)
	}
	return out.Item != nil, nil
}
