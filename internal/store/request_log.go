package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"tix/internal/auth"
)

// RequestLogKeyPrefix is the partition key prefix of the request log: one
// item REQLOG#<request_id> per request authenticated with an organizer's
// key, which TTL removes after auth.RequestLogKeep. The HTTP functions put
// them (and nothing else under the prefix; a PutItem of ~200 bytes is one
// write unit).
const RequestLogKeyPrefix = "REQLOG#"

const skRequestLog = "REQLOG"

// RequestLog is the request log (GET /request-log/{request_id}).
type RequestLog struct{ *core }

// RequestLog returns the request log store over the shared DB.
func (s *DB) RequestLog() *RequestLog { return &RequestLog{s.core} }

// PutRequest writes one request's record. Its capacity is left out of the
// OnCapacity measurements: it is written after the response, off its path.
func (s *RequestLog) PutRequest(ctx context.Context, rec auth.RequestRecord) error {
	item, err := marshal(rec)
	if err != nil {
		return err
	}
	for k, v := range keyOf(RequestLogKeyPrefix+rec.RequestID, skRequestLog) {
		item[k] = v
	}
	item["ttl"] = num(strconv.FormatInt(rec.CreatedAt.Add(auth.RequestLogKeep).Unix(), 10))
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("log request %s: %w", rec.RequestID, err)
	}
	return nil
}

// GetRequest reads a request's record; nil when there is none (never
// logged, or older than auth.RequestLogKeep: TTL may take a while, so an
// expired one is refused here too).
func (s *RequestLog) GetRequest(ctx context.Context, requestID string) (*auth.RequestRecord, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(RequestLogKeyPrefix+requestID, skRequestLog),
	})
	if err != nil {
		return nil, fmt.Errorf("read request %s: %w", requestID, err)
	}
	if out.Item == nil {
		return nil, nil
	}
	var rec auth.RequestRecord
	if err := unmarshal(out.Item, &rec); err != nil {
		return nil, err
	}
	if s.clock.Now().After(rec.CreatedAt.Add(auth.RequestLogKeep)) {
		return nil, nil
	}
	return &rec, nil
}
