package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/emailjobs"
)

// The daily cap of emails per recipient and organizer: one item per
// (organizer, address hash, UTC day), MAILCAP#<org>#<sha256 of the
// normalized address> / DAY#<YYYY-MM-DD>, holding the string set jobs of
// the job ids counted that day. One conditional UpdateItem adds a job while
// the set is below the cap (or already holds it, so a retried job counts
// once); DynamoDB serializes writes to an item, so N+k concurrent charges
// let exactly N through. No address is kept; TTL removes the item after
// three days. A busy recipient is one item, not a hot partition: a cap of
// 20 a day is 20 writes.
func mailCapKey(org, addr, day string) map[string]types.AttributeValue {
	sum := sha256.Sum256([]byte(emailjobs.Normalize(addr)))
	return keyOf("MAILCAP#"+org+"#"+hex.EncodeToString(sum[:]), "DAY#"+day)
}

// ChargeRecipient implements emailjobs.Store.
func (s *Emails) ChargeRecipient(ctx context.Context, org, addr, day, jobID string, limit int) (bool, error) {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return false, fmt.Errorf("charge a recipient's day %q: %w", day, err)
	}
	x := newExprs()
	jobs := x.n("jobs")
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: mailCapKey(org, addr, day),
		UpdateExpression: aws.String("ADD " + jobs + " " + x.v(&types.AttributeValueMemberSS{Value: []string{jobID}}) +
			" SET " + x.n("ttl") + " = " + x.d(d.Add(72*time.Hour).Unix())),
		ConditionExpression: aws.String("attribute_not_exists(" + jobs + ") OR size(" + jobs + ") < " +
			x.v(num(strconv.Itoa(limit))) + " OR contains(" + jobs + ", " + x.s(jobID) + ")"),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals, ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("charge a recipient's daily email cap (job %s): %w", jobID, err)
	}
	s.record("ChargeRecipient", out.ConsumedCapacity)
	return true, nil
}
