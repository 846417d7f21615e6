package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// An organizer's payment account is one item under the organizer
// (ORG#id / PAYACCT), and a pointer item per acquirer terminal
// (ACQ#acquirer#terminal / ACQ) that finds it from a notification, which
// names only the terminal. One terminal serves one organizer.
const skPaymentAccount = "PAYACCT"

func acquirerPK(acquirer, terminal string) string { return "ACQ#" + acquirer + "#" + terminal }

type paymentAccountItem struct {
	PK, SK string
	ticketing.PaymentAccount
}

// PutPaymentAccount connects (or reconnects) an organizer's terminal and
// marks the organizer verified, in one transaction: the account, the
// terminal's pointer (refused when another organizer's terminal has that key:
// a conflict), the old terminal's pointer deleted when the key changed.
func (s *Payments) PutPaymentAccount(ctx context.Context, a ticketing.PaymentAccount) error {
	old, err := s.GetPaymentAccount(ctx, a.OrganizerID)
	if err != nil && !ticketing.IsCode(err, ticketing.CodeNotFound) {
		return err
	}
	item, err := marshal(paymentAccountItem{PK: orgPK(a.OrganizerID), SK: skPaymentAccount, PaymentAccount: a})
	if err != nil {
		return fmt.Errorf("marshal payment account of %s: %w", a.OrganizerID, err)
	}
	e := newExprs()
	items := []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: aws.String(s.table), Key: keyOf(orgPK(a.OrganizerID), skOrganizer),
			UpdateExpression:    aws.String("SET " + e.n("verified") + " = " + e.v(&types.AttributeValueMemberBOOL{Value: true})),
			ConditionExpression: aws.String("attribute_exists(PK)"), ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
		}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: item}},
	}
	pe := newExprs()
	items = append(items, types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{
			"PK": str(acquirerPK(a.Acquirer, a.TerminalKey)), "SK": str("ACQ"), "org": str(a.OrganizerID),
		},
		ConditionExpression:      aws.String("attribute_not_exists(PK) OR " + pe.n("org") + " = " + pe.s(a.OrganizerID)),
		ExpressionAttributeNames: pe.names, ExpressionAttributeValues: pe.vals,
	}})
	if old != nil && (old.TerminalKey != a.TerminalKey || old.Acquirer != a.Acquirer) {
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(s.table), Key: keyOf(acquirerPK(old.Acquirer, old.TerminalKey), "ACQ"),
		}})
	}
	err = s.transact(ctx, "PutPaymentAccount", items)
	if failed, ok := failedItems(err); ok && len(failed) > 0 {
		if failed[0] == 0 {
			return ticketing.NotFound("organizer " + a.OrganizerID)
		}
		return ticketing.Errorf(ticketing.CodeConflict, "terminal %s is connected to another organizer", a.TerminalKey)
	}
	if err != nil {
		return fmt.Errorf("connect terminal of %s: %w", a.OrganizerID, err)
	}
	return nil
}

// GetPaymentAccount reads an organizer's payment account (not_found when it
// has none).
func (s *Payments) GetPaymentAccount(ctx context.Context, organizerID string) (*ticketing.PaymentAccount, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(orgPK(organizerID), skPaymentAccount), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read payment account of %s: %w", organizerID, err)
	}
	s.record("GetPaymentAccount", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, ticketing.NotFound("payment account of organizer " + organizerID)
	}
	var it paymentAccountItem
	if err := unmarshal(out.Item, &it); err != nil {
		return nil, fmt.Errorf("decode payment account of %s: %w", organizerID, err)
	}
	return &it.PaymentAccount, nil
}

// PaymentAccountByTerminal finds the account of an acquirer's terminal
// (not_found when no organizer has connected it).
func (s *Payments) PaymentAccountByTerminal(ctx context.Context, acquirer, terminalKey string) (*ticketing.PaymentAccount, error) {
	if terminalKey == "" || len(terminalKey) > 100 {
		return nil, ticketing.NotFound("terminal")
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(acquirerPK(acquirer, terminalKey), "ACQ"), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read terminal %s: %w", terminalKey, err)
	}
	s.record("PaymentAccountByTerminal", out.ConsumedCapacity)
	org, ok := out.Item["org"].(*types.AttributeValueMemberS)
	if !ok {
		return nil, ticketing.NotFound("terminal")
	}
	a, err := s.GetPaymentAccount(ctx, org.Value)
	if err != nil {
		return nil, err
	}
	if a.Acquirer != acquirer || a.TerminalKey != terminalKey {
		return nil, ticketing.NotFound("terminal") // reconnected to another terminal meanwhile
	}
	return a, nil
}
