package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// The sales tally (ticketing.Tally): counter items updated inside the order
// transactions, so they count exactly what was committed. An organizer and
// environment has ticketing.TallyShards partitions TALLY#<org>#<env>#<shard>
// (a shard picked at random for each transaction built, so that an order
// transaction retried after a conflict moves off the item that was held:
// every reader sums all shards) of quarter-hour items
// Q#<quarter start, UTC>: c<mm>/p<mm> orders created/paid in minute mm of the
// quarter, u_<event>/r_<event> units and revenue paid; ttl 3 days on. Beside
// them, TALLYE#<org>#<env>#<shard> holds E#<event>: r_<tier>, the ticket
// revenue paid, less refunds. No item is hot: an on-sale's orders spread
// over the shards, and the dashboard reads with one Query per shard.

const tallyKeep = 3 * 24 * time.Hour

// Tally reads the sales tally (the dashboard's Sales port); the order
// transactions write it.
type Tally struct{ *core }

// TallyOf is the store's sales tally reader (a function, not a method of
// Store, so that the API functions do not link it).
func TallyOf(s *Store) *Tally { return &Tally{s.DB.core} }

// tallyShard is the shard of one transaction's tally items.
func tallyShard() int { return rand.IntN(ticketing.TallyShards) }

func tallyShardPK(org string, env ticketing.Environment, shard int) string {
	return "TALLY#" + org + "#" + string(env) + "#" + strconv.Itoa(shard)
}

// tallyRevenuePK is the partition of the tier revenue items: apart from the
// quarters, so that a payment's two updates load two partitions.
func tallyRevenuePK(org string, env ticketing.Environment, shard int) string {
	return "TALLYE#" + org + "#" + string(env) + "#" + strconv.Itoa(shard)
}

func tallyQuarterSK(t time.Time) string {
	return "Q#" + t.UTC().Truncate(ticketing.TallyQuarter).Format("2006-01-02T15:04")
}

// tallyMinute is the attribute suffix of t's minute within its quarter.
func tallyMinute(t time.Time) string {
	t = t.UTC()
	m := byte(t.Sub(t.Truncate(ticketing.TallyQuarter)) / time.Minute)
	return string([]byte{'0' + m/10, '0' + m%10})
}

// tallyQuarter counts an order on its quarter's item: created (paid false),
// or paid with its units and total.
func tallyQuarter(table string, o *ticketing.Order, at time.Time, paid bool) types.TransactWriteItem {
	e := newExprs()
	q := at.UTC().Truncate(ticketing.TallyQuarter)
	add := "ADD " + e.n("c"+tallyMinute(at)) + " " + e.d(1)
	if paid {
		e = newExprs()
		add = "ADD " + e.n("p"+tallyMinute(at)) + " " + e.d(1) + ", " + e.n("u_"+o.EventID) + " " + e.d(int64(o.Quantity)) +
			", " + e.n("r_"+o.EventID) + " " + e.d(o.TotalPrice)
	}
	add += " SET " + e.n("ttl") + " = " + e.d(q.Add(tallyKeep).Unix())
	return tallyAdd(table, tallyShardPK(o.OrganizerID, o.Environment, tallyShard()), tallyQuarterSK(q), add, e)
}

// tallyTiers adds (sign 1) or takes back (sign -1, a refund) the order's
// ticket revenue per tier (its lines at their unit price), and the order.
func tallyTiers(table string, o *ticketing.Order, sign int64) types.TransactWriteItem {
	e := newExprs()
	var tiers []string // in the order's order; one ADD per tier (seats of one tier are lines of their own)
	sum := map[string]int64{}
	for _, l := range o.Lines {
		if _, ok := sum[l.TierID]; !ok {
			tiers = append(tiers, l.TierID)
		}
		sum[l.TierID] += l.UnitPrice * int64(l.Quantity)
	}
	add := "ADD " + e.n("n") + " " + e.d(sign) // never empty, whatever the lines
	for _, t := range tiers {
		add += ", " + e.n("r_"+t) + " " + e.d(sign*sum[t])
	}
	return tallyAdd(table, tallyRevenuePK(o.OrganizerID, o.Environment, tallyShard()), "E#"+o.EventID, add, e)
}

func tallyAdd(table, pk, sk, expr string, e *exprs) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{TableName: aws.String(table), Key: keyOf(pk, sk),
		UpdateExpression: aws.String(expr), ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.vals}}
}

// tallyPaid is what a payment (or a late payment's reinstatement) adds.
func tallyPaid(table string, o *ticketing.Order, at time.Time) []types.TransactWriteItem {
	return []types.TransactWriteItem{tallyQuarter(table, o, at, true), tallyTiers(table, o, 1)}
}

// SalesTally reads the tally of the quarters from `from` (truncated to its
// quarter) on: one Query per shard, in parallel.
func (s *Tally) SalesTally(ctx context.Context, org string, env ticketing.Environment, from time.Time) (*ticketing.Tally, error) {
	items, err := s.shardQuery(ctx, "SalesTally", "", ticketing.TallyShards,
		func(i int) string { return tallyShardPK(org, env, i) }, ">=", tallyQuarterSK(from), 1000, nil)
	if err != nil {
		return nil, err
	}
	t := ticketing.NewTally()
	for _, it := range items {
		q, err := time.Parse("2006-01-02T15:04", strings.TrimPrefix(attrS(it, "SK"), "Q#"))
		if err != nil {
			return nil, fmt.Errorf("sales tally item %s: %w", attrS(it, "SK"), err)
		}
		for name, v := range it {
			n, ok := numOf(v)
			if !ok {
				continue
			}
			switch {
			case len(name) == 3 && (name[0] == 'c' || name[0] == 'p'):
				mm, err := strconv.Atoi(name[1:])
				if err != nil {
					continue
				}
				at := q.Add(time.Duration(mm) * time.Minute)
				c := t.Minutes[at]
				if name[0] == 'c' {
					c.Created += int(n)
				} else {
					c.Paid += int(n)
				}
				t.Minutes[at] = c
			case strings.HasPrefix(name, "u_"):
				ev := t.Events[name[2:]]
				ev.Units += int(n)
				t.Events[name[2:]] = ev
			case strings.HasPrefix(name, "r_"):
				ev := t.Events[name[2:]]
				ev.Revenue += n
				t.Events[name[2:]] = ev
			}
		}
	}
	return t, nil
}

// TierRevenue reads every event's ticket revenue per tier: one Query per shard.
func (s *Tally) TierRevenue(ctx context.Context, org string, env ticketing.Environment) (ticketing.TierRevenue, error) {
	items, err := s.shardQuery(ctx, "TierRevenue", "", ticketing.TallyShards,
		func(i int) string { return tallyRevenuePK(org, env, i) }, ">=", "E#", 100000, nil)
	if err != nil {
		return nil, err
	}
	out := ticketing.TierRevenue{}
	for _, it := range items {
		ev := strings.TrimPrefix(attrS(it, "SK"), "E#")
		for name, v := range it {
			if n, ok := numOf(v); ok && strings.HasPrefix(name, "r_") { // n: the paid orders' count
				if out[ev] == nil {
					out[ev] = map[string]int64{}
				}
				out[ev][name[2:]] += n
			}
		}
	}
	return out, nil
}

func numOf(v types.AttributeValue) (int64, bool) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	return i, err == nil
}
