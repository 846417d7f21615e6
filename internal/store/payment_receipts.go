package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// SetReceiptSettings changes the taxation and VAT rate of an organizer's
// existing payment account, and nothing else: the terminal, its password and
// the organizer's verification stay as they are. An organizer without an
// account is not_found.
func (s *Payments) SetReceiptSettings(ctx context.Context, organizerID, taxation, vat string) (*ticketing.PaymentAccount, error) {
	e := newExprs()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(orgPK(organizerID), skPaymentAccount),
		UpdateExpression:         aws.String("SET " + e.n("taxation") + " = " + e.s(taxation) + ", " + e.n("vat") + " = " + e.s(vat)),
		ConditionExpression:      aws.String("attribute_exists(PK)"),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		ReturnValues: types.ReturnValueAllNew, ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return nil, ticketing.NotFound("payment account of organizer " + organizerID)
	}
	if err != nil {
		return nil, fmt.Errorf("set receipt settings of %s: %w", organizerID, err)
	}
	s.record("SetReceiptSettings", out.ConsumedCapacity)
	var it paymentAccountItem
	if err := unmarshal(out.Attributes, &it); err != nil {
		return nil, fmt.Errorf("decode payment account of %s: %w", organizerID, err)
	}
	return &it.PaymentAccount, nil
}
