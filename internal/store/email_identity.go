package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/emailjobs"
	"tix/internal/ticketing"
)

// An organizer's email identity lives on its organizer item, one top-level
// attribute per field (mail_sender, mail_reply_to, mail_support, mail_logo,
// mail_lang, mail_contacts, and the string set mail_test_recipients), so
// set-identity, set-contacts and test-recipients change only what they name
// and never lose each other's writes.
var identityAttrs = map[string]string{
	"sender_name": "mail_sender", "reply_to": "mail_reply_to", "support": "mail_support",
	"logo_url": "mail_logo", "language": "mail_lang",
}

// GetIdentity reads an organizer's name and email identity.
func (s *Emails) GetIdentity(ctx context.Context, org string) (*emailjobs.Identity, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(orgPK(org), skOrganizer), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("get organizer %s: %w", org, err)
	}
	s.record("GetIdentity", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, emailjobs.ErrNotFound
	}
	return identityFrom(org, out.Item), nil
}

func identityFrom(org string, it map[string]types.AttributeValue) *emailjobs.Identity {
	id := &emailjobs.Identity{OrganizerID: org, Name: attrS(it, "name"), SenderName: attrS(it, "mail_sender"),
		ReplyTo: attrS(it, "mail_reply_to"), Support: attrS(it, "mail_support"), LogoURL: attrS(it, "mail_logo"),
		Language: attrS(it, "mail_lang"), Contacts: []string{}, TestRecipients: []string{}}
	if l, ok := it["mail_contacts"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if sv, ok := v.(*types.AttributeValueMemberS); ok {
				id.Contacts = append(id.Contacts, sv.Value)
			}
		}
	}
	if ss, ok := it[testRecipientsAttr].(*types.AttributeValueMemberSS); ok {
		id.TestRecipients = append(id.TestRecipients, ss.Value...)
		sort.Strings(id.TestRecipients)
	}
	return id
}

// testRecipientsAttr is the organizer's test allow-list, a string set of
// normalized addresses.
const testRecipientsAttr = "mail_test_recipients"

// SetIdentity sets the named identity fields (keys of identityAttrs; "" removes
// one) of an existing organizer and returns its identity after; a value
// emailjobs.CheckIdentityField refuses is invalid_request naming its field.
func (s *Emails) SetIdentity(ctx context.Context, org string, fields map[string]string) (*emailjobs.Identity, error) {
	x := newExprs()
	var set, remove []string
	for k, v := range fields {
		attr, ok := identityAttrs[k]
		if !ok {
			return nil, fmt.Errorf("unknown identity field %q", k)
		}
		if err := emailjobs.CheckIdentityField(k, v); err != nil {
			return nil, err
		}
		if v == "" {
			remove = append(remove, x.n(attr))
		} else {
			set = append(set, x.n(attr)+" = "+x.s(v))
		}
	}
	var expr []string
	if len(set) > 0 {
		expr = append(expr, "SET "+strings.Join(set, ", "))
	}
	if len(remove) > 0 {
		expr = append(expr, "REMOVE "+strings.Join(remove, ", "))
	}
	return s.updateIdentity(ctx, org, x, expr, "")
}

// SetContacts replaces an organizer's owner contact addresses.
func (s *Emails) SetContacts(ctx context.Context, org string, contacts []string) (*emailjobs.Identity, error) {
	x := newExprs()
	l := &types.AttributeValueMemberL{}
	for _, c := range contacts {
		l.Value = append(l.Value, str(c))
	}
	return s.updateIdentity(ctx, org, x, []string{"SET " + x.n("mail_contacts") + " = " + x.v(l)}, "")
}

// AddTestRecipient puts an address (normalized) on the organizer's test
// allow-list, at most emailjobs.MaxTestRecipients of them (conflict beyond);
// adding one that is there changes nothing.
func (s *Emails) AddTestRecipient(ctx context.Context, org, addr string) (*emailjobs.Identity, error) {
	x := newExprs()
	a := emailjobs.Normalize(addr)
	list := x.n(testRecipientsAttr)
	cond := "(attribute_not_exists(" + list + ") OR size(" + list + ") < " + x.d(emailjobs.MaxTestRecipients) +
		" OR contains(" + list + ", " + x.s(a) + "))"
	id, err := s.updateIdentity(ctx, org, x, []string{"ADD " + list + " " + x.v(&types.AttributeValueMemberSS{Value: []string{a}})}, cond)
	if errors.Is(err, errConditionFailed) {
		return nil, ticketing.Errorf(ticketing.CodeConflict,
			"organizer %s has %d test recipients already: remove one first (--remove)", org, emailjobs.MaxTestRecipients)
	}
	return id, err
}

// RemoveTestRecipient takes an address off the organizer's test allow-list
// (one that is not there changes nothing).
func (s *Emails) RemoveTestRecipient(ctx context.Context, org, addr string) (*emailjobs.Identity, error) {
	x := newExprs()
	set := &types.AttributeValueMemberSS{Value: []string{emailjobs.Normalize(addr)}}
	return s.updateIdentity(ctx, org, x, []string{"DELETE " + x.n(testRecipientsAttr) + " " + x.v(set)}, "")
}

// errConditionFailed is updateIdentity's extra condition failing on an
// organizer that exists.
var errConditionFailed = errors.New("condition failed")

// updateIdentity applies the update clauses to an existing organizer (not
// found otherwise) under the extra condition cond ("" for none; its failure
// is errConditionFailed), and returns its identity after.
func (s *Emails) updateIdentity(ctx context.Context, org string, x *exprs, expr []string, cond string) (*emailjobs.Identity, error) {
	if len(expr) == 0 {
		return s.GetIdentity(ctx, org)
	}
	condition := "attribute_exists(" + x.n("PK") + ")"
	if cond != "" {
		condition += " AND " + cond
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(orgPK(org), skOrganizer),
		UpdateExpression:         aws.String(strings.Join(expr, " ")),
		ConditionExpression:      aws.String(condition),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: nilIfEmpty(x.vals),
		ReturnValues: types.ReturnValueAllNew,
	})
	if _, ok := isConditionFailed(err); ok {
		if _, gerr := s.GetIdentity(ctx, org); cond != "" && gerr == nil {
			return nil, errConditionFailed
		}
		return nil, ticketing.NotFound("organizer " + org)
	}
	if err != nil {
		return nil, fmt.Errorf("set identity of organizer %s: %w", org, err)
	}
	return identityFrom(org, out.Attributes), nil
}

func nilIfEmpty(m map[string]types.AttributeValue) map[string]types.AttributeValue {
	if len(m) == 0 {
		return nil
	}
	return m
}

// The suppression list: one item per address that bounced for good or
// complained, keyed by the SHA-256 of the normalized address, so the table
// holds no address in a key.
func suppressKey(addr string) map[string]types.AttributeValue {
	sum := sha256.Sum256([]byte(emailjobs.Normalize(addr)))
	return keyOf("SUPPRESS#"+hex.EncodeToString(sum[:]), "SUPPRESS")
}

// Suppress puts an address on the suppression list (again: the latest reason wins).
func (s *Emails) Suppress(ctx context.Context, sup emailjobs.Suppression) error {
	item := suppressKey(sup.Address)
	item["reason"] = str(sup.Reason)
	item["at"] = num(strconv.FormatInt(sup.At.UnixMilli(), 10))
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	if err != nil {
		return fmt.Errorf("suppress an address: %w", err)
	}
	return nil
}

// Suppressed reports whether an address is on the suppression list.
func (s *Emails) Suppressed(ctx context.Context, addr string) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: suppressKey(addr), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return false, fmt.Errorf("read the suppression list: %w", err)
	}
	s.record("Suppressed", out.ConsumedCapacity)
	return out.Item != nil, nil
}

var (
	_ emailjobs.Store      = (*Emails)(nil)
	_ emailjobs.Suppressor = (*Emails)(nil)
	_ emailjobs.KeyIPStore = (*Keys)(nil)
)
