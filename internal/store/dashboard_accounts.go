package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
)

// Accounts is the organizer dashboard's storage (account.Store) on the
// single table: users, memberships, sessions, email links, the audit log
// and dashboard settings. README.md lists its items.
type Accounts struct{ s *Store }

// Accounts returns the dashboard's storage over s's table.
func (s *Store) Accounts() *Accounts { return &Accounts{s: s} }

var _ account.Store = (*Accounts)(nil)

const (
	skUser        = "USER"
	skSession     = "SESSION"
	skToken       = "TOKEN"
	skDashConfig  = "SETTINGS"
	memberPrefix  = "MEMBER#"
	auditPrefix   = "AUDIT#"
	auditTimeForm = "2006-01-02T15:04:05.000000000Z"
)

func userPK(email string) string     { return "DUSER#" + email }
func userOrgsPK(email string) string { return "DUSER#" + email + "#ORGS" }
func dashOrgPK(org string) string    { return "DORG#" + org }
func sessionPK(hash string) string   { return "DSESS#" + hash }
func tokenPK(hash string) string     { return "DTOKEN#" + hash }

type userItem struct {
	PK, SK string
	account.User
}

type memberItem struct {
	PK, SK, GSI1PK, GSI1SK string
	account.Member
}

type settingsItem struct {
	PK, SK string
	account.Settings
}

func (a *Accounts) put(v any) (*types.Put, error) {
	item, err := marshal(v)
	if err != nil {
		return nil, err
	}
	return &types.Put{TableName: aws.String(a.s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}, nil
}

func memberOf(m account.Member) memberItem {
	return memberItem{PK: dashOrgPK(m.OrganizerID), SK: memberPrefix + m.Email,
		GSI1PK: userOrgsPK(m.Email), GSI1SK: m.OrganizerID, Member: m}
}

// SignUp writes the organizer, its owner and its settings in one
// transaction. The owner's address is the organizer's alert contact
// (mail_contacts, as tixctl organizers set-contacts writes it), so its
// alerts and its test-mode emails reach the owner from the start.
func (a *Accounts) SignUp(ctx context.Context, o ticketing.Organizer, u account.User, m account.Member, st account.Settings) error {
	var items []types.TransactWriteItem
	for i, v := range []any{
		userItem{PK: userPK(u.Email), SK: skUser, User: u},
		organizerItem{PK: orgPK(o.ID), SK: skOrganizer, GSI1PK: orgListPK, GSI1SK: sortTime(o.CreatedAt) + "#" + o.ID, Organizer: o},
		memberOf(m),
		settingsItem{PK: dashOrgPK(st.OrganizerID), SK: skDashConfig, Settings: st},
	} {
		p, err := a.put(v)
		if err != nil {
			return fmt.Errorf("marshal sign-up of %s: %w", o.ID, err)
		}
		if i == 1 {
			p.Item["mail_contacts"] = &types.AttributeValueMemberL{Value: []types.AttributeValue{str(u.Email)}}
		}
		items = append(items, types.TransactWriteItem{Put: p})
	}
	_, err := a.s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		if len(tc.CancellationReasons) > 0 && aws.ToString(tc.CancellationReasons[0].Code) == "ConditionalCheckFailed" {
			return account.ErrExists
		}
		return fmt.Errorf("sign up %s: %w", o.ID, err)
	}
	if err != nil {
		return fmt.Errorf("sign up %s: %w", o.ID, err)
	}
	return nil
}

func (a *Accounts) putNew(ctx context.Context, what string, v any) error {
	p, err := a.put(v)
	if err != nil {
		return fmt.Errorf("marshal %s: %w", what, err)
	}
	_, err = a.s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression})
	if _, ok := isConditionFailed(err); ok {
		return account.ErrExists
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	return nil
}

func (a *Accounts) get(ctx context.Context, pk, sk string, v any) error {
	out, err := a.s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(a.s.table), Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("get %s: %w", sk, err)
	}
	if out.Item == nil {
		return account.ErrNotFound
	}
	return unmarshal(out.Item, v)
}

// CreateUser writes a user if no account has its email.
func (a *Accounts) CreateUser(ctx context.Context, u account.User) error {
	return a.putNew(ctx, "user", userItem{PK: userPK(u.Email), SK: skUser, User: u})
}

// GetUser reads the account of an email.
func (a *Accounts) GetUser(ctx context.Context, email string) (*account.User, error) {
	var it userItem
	if err := a.get(ctx, userPK(email), skUser, &it); err != nil {
		return nil, err
	}
	return &it.User, nil
}

// setUser applies SET clauses (their names and values in e) to a user.
func (a *Accounts) setUser(ctx context.Context, email string, e *exprs, set string) error {
	_, err := a.s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(a.s.table), Key: keyOf(userPK(email), skUser),
		UpdateExpression:         aws.String("SET " + set),
		ConditionExpression:      aws.String("attribute_exists(PK)"),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
	if _, ok := isConditionFailed(err); ok {
		return account.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("update user: %w", err)
	}
	return nil
}

// MarkVerified records that the email's owner opened the verification link.
func (a *Accounts) MarkVerified(ctx context.Context, email string, at time.Time) error {
	e := newExprs()
	return a.setUser(ctx, email, e, e.n("verified_at")+" = "+e.s(at.UTC().Format(time.RFC3339Nano)))
}

// SetPassword replaces the user's password hash and ends its sessions: the
// same update adds one to session_epoch, and a session started under an
// earlier epoch is refused (the dashboard compares them on every request).
func (a *Accounts) SetPassword(ctx context.Context, email, hash string) error {
	e := newExprs()
	epoch := e.n("session_epoch")
	return a.setUser(ctx, email, e, e.n("password_hash")+" = "+e.s(hash)+", "+epoch+" = if_not_exists("+epoch+", "+e.d(0)+") + "+e.d(1))
}

// AddMember adds a membership once.
func (a *Accounts) AddMember(ctx context.Context, m account.Member) error {
	return a.putNew(ctx, "member", memberOf(m))
}

// GetMember reads one membership.
func (a *Accounts) GetMember(ctx context.Context, org, email string) (*account.Member, error) {
	var it memberItem
	if err := a.get(ctx, dashOrgPK(org), memberPrefix+email, &it); err != nil {
		return nil, err
	}
	return &it.Member, nil
}

// RemoveMember deletes a membership; a missing one is ErrNotFound.
func (a *Accounts) RemoveMember(ctx context.Context, org, email string) error {
	return a.delete(ctx, dashOrgPK(org), memberPrefix+email, nil)
}

func (a *Accounts) delete(ctx context.Context, pk, sk string, old any) error {
	out, err := a.s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(a.s.table), Key: keyOf(pk, sk),
		ConditionExpression: aws.String("attribute_exists(PK)"), ReturnValues: types.ReturnValueAllOld,
	})
	if _, ok := isConditionFailed(err); ok {
		return account.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", sk, err)
	}
	if old != nil {
		return unmarshal(out.Attributes, old)
	}
	return nil
}

func (a *Accounts) query(ctx context.Context, in *dynamodb.QueryInput, max int, each func(map[string]types.AttributeValue) error) error {
	in.TableName = aws.String(a.s.table)
	p := dynamodb.NewQueryPaginator(a.s.db, in)
	n := 0
	for p.HasMorePages() && (max <= 0 || n < max) {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("query: %w", err)
		}
		for _, item := range page.Items {
			if max > 0 && n >= max {
				break
			}
			if err := each(item); err != nil {
				return err
			}
			n++
		}
	}
	return nil
}

func (a *Accounts) members(ctx context.Context, in *dynamodb.QueryInput) ([]account.Member, error) {
	out := []account.Member{}
	err := a.query(ctx, in, 0, func(item map[string]types.AttributeValue) error {
		var it memberItem
		if err := unmarshal(item, &it); err != nil {
			return fmt.Errorf("decode member: %w", err)
		}
		out = append(out, it.Member)
		return nil
	})
	return out, err
}

// ListMembers lists an organizer's members by email.
func (a *Accounts) ListMembers(ctx context.Context, org string) ([]account.Member, error) {
	return a.members(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :m)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(dashOrgPK(org)), ":m": str(memberPrefix)},
		ConsistentRead:            aws.Bool(true),
	})
}

// Memberships lists the organizers an email belongs to (GSI1).
func (a *Accounts) Memberships(ctx context.Context, email string) ([]account.Member, error) {
	return a.members(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(userOrgsPK(email))},
	})
}

type sessionItem struct {
	PK, SK string
	TTL    int64 `json:"ttl"`
	account.Session
}

// CreateSession stores a session under the hash of its id.
func (a *Accounts) CreateSession(ctx context.Context, hash string, s account.Session) error {
	return a.putNew(ctx, "session", sessionItem{PK: sessionPK(hash), SK: skSession, TTL: s.ExpiresAt.Add(housekeeping).Unix(), Session: s})
}

// GetSession reads a session; whether it expired is the caller's to compare.
func (a *Accounts) GetSession(ctx context.Context, hash string) (*account.Session, error) {
	var it sessionItem
	if err := a.get(ctx, sessionPK(hash), skSession, &it); err != nil {
		return nil, err
	}
	return &it.Session, nil
}

// DeleteSession ends a session; an ended one is fine.
func (a *Accounts) DeleteSession(ctx context.Context, hash string) error {
	if err := a.delete(ctx, sessionPK(hash), skSession, nil); err != nil && !errors.Is(err, account.ErrNotFound) {
		return err
	}
	return nil
}

type tokenItem struct {
	PK, SK string
	TTL    int64 `json:"ttl"`
	account.Token
}

// CreateToken stores an emailed link's token under the hash of its secret.
func (a *Accounts) CreateToken(ctx context.Context, hash string, t account.Token) error {
	return a.putNew(ctx, "link", tokenItem{PK: tokenPK(hash), SK: skToken, TTL: t.ExpiresAt.Add(housekeeping).Unix(), Token: t})
}

// GetToken reads a token without taking it.
func (a *Accounts) GetToken(ctx context.Context, hash string) (*account.Token, error) {
	var it tokenItem
	if err := a.get(ctx, tokenPK(hash), skToken, &it); err != nil {
		return nil, err
	}
	return &it.Token, nil
}

// TakeToken deletes the token (conditionally: one taker) and returns it.
func (a *Accounts) TakeToken(ctx context.Context, hash string) (*account.Token, error) {
	var it tokenItem
	if err := a.delete(ctx, tokenPK(hash), skToken, &it); err != nil {
		return nil, err
	}
	return &it.Token, nil
}

type entryItem struct {
	PK, SK string
	account.Entry
}

// AddEntry appends one line to an organizer's audit log.
func (a *Accounts) AddEntry(ctx context.Context, e account.Entry) error {
	sk := auditPrefix + e.At.UTC().Format(auditTimeForm) + "#" + account.NewSecret()[:8]
	return a.putNew(ctx, "audit entry", entryItem{PK: dashOrgPK(e.OrganizerID), SK: sk, Entry: e})
}

// Entries reads an organizer's audit log backwards, at most limit lines.
func (a *Accounts) Entries(ctx context.Context, org string, limit int) ([]account.Entry, error) {
	out := []account.Entry{}
	err := a.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :a)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(dashOrgPK(org)), ":a": str(auditPrefix)},
		ScanIndexForward:          aws.Bool(false), Limit: aws.Int32(int32(limit)),
	}, limit, func(item map[string]types.AttributeValue) error {
		var it entryItem
		if err := unmarshal(item, &it); err != nil {
			return fmt.Errorf("decode audit entry: %w", err)
		}
		out = append(out, it.Entry)
		return nil
	})
	return out, err
}

// GetSettings reads an organizer's dashboard settings (defaults when none).
func (a *Accounts) GetSettings(ctx context.Context, org string) (*account.Settings, error) {
	var it settingsItem
	err := a.get(ctx, dashOrgPK(org), skDashConfig, &it)
	if errors.Is(err, account.ErrNotFound) {
		return &account.Settings{OrganizerID: org, TimeZone: account.DefaultTimeZone}, nil
	}
	if err != nil {
		return nil, err
	}
	return &it.Settings, nil
}

// SetTimeZone changes an organizer's time zone (one attribute of its
// settings item, which it creates when the organizer has none).
func (a *Accounts) SetTimeZone(ctx context.Context, org, zone string) error {
	e := newExprs()
	_, err := a.s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(a.s.table), Key: keyOf(dashOrgPK(org), skDashConfig),
		UpdateExpression:         aws.String("SET " + e.n("time_zone") + " = " + e.s(zone) + ", " + e.n("organizer_id") + " = " + e.s(org)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals,
	})
	if err != nil {
		return fmt.Errorf("set the time zone of %s: %w", org, err)
	}
	return nil
}
