package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/emailjobs"
)

// Email jobs: one item per email owed, in its subject's partition
// (EMAIL#<order or organizer id>, JOB#<name>), so an order's jobs are one
// Query. Top-level st and ver, the JSON document, and, while the job is due
// (pending or sending), the sharded due index GSI3 EMDUE#<shard> that the
// sweep reads (the due time is the GSI3SK's first part).
//
// 64 shards, as the other due indexes: at 5,000 paid orders a second each job
// writes its due entry about twice (created, claimed), ~160 WCU/s a shard.
// Jobs written under 8 shards sit in shards 0-7, which are among the 64 read.
const (
	emailDueShards = 64
	emailRetention = 400 * 24 * time.Hour
)

func emailPK(subject string) string  { return "EMAIL#" + subject }
func emailSK(name string) string     { return "JOB#" + name }
func emailDuePK(shard uint32) string { return "EMDUE#" + strconv.FormatUint(uint64(shard), 10) }

func jobAV(j *emailjobs.Job, version int64, due time.Time, isDue bool) (map[string]types.AttributeValue, error) {
	doc, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encode email job %s: %w", j.ID(), err)
	}
	item := map[string]types.AttributeValue{
		"PK": str(emailPK(j.Subject)), "SK": str(emailSK(j.Name)),
		"st": str(string(j.Status)), "ver": num(strconv.FormatInt(version, 10)), "doc": str(string(doc)),
		"ttl": num(strconv.FormatInt(j.CreatedAt.Add(emailRetention).Unix(), 10)),
	}
	if isDue {
		item["GSI3PK"] = str(emailDuePK(shardOf(j.ID(), emailDueShards)))
		item["GSI3SK"] = str(orderSortKey(due, j.ID()))
	}
	return item, nil
}

func jobFrom(item map[string]types.AttributeValue) (*emailjobs.Job, error) {
	var j emailjobs.Job
	if err := json.Unmarshal([]byte(attrS(item, "doc")), &j); err != nil {
		return nil, fmt.Errorf("decode email job %s %s: %w", attrS(item, "PK"), attrS(item, "SK"), err)
	}
	j.Version, _ = attrN(item, "ver")
	return &j, nil
}

// jobPut is a new job's put (version 1), conditional on its absence.
func (s *core) jobPut(j *emailjobs.Job) (*types.Put, error) {
	due, ok := j.DueAt(0)
	item, err := jobAV(j, 1, due, ok)
	if err != nil {
		return nil, err
	}
	return &types.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}, nil
}

// CreateJobs puts each job unless it exists (an existing job is left as it is).
func (s *Emails) CreateJobs(ctx context.Context, jobs []*emailjobs.Job) (int, error) {
	n := 0
	for _, j := range jobs {
		p, err := s.jobPut(j)
		if err != nil {
			return n, err
		}
		out, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression, ReturnConsumedCapacity: s.rcc(),
		})
		if _, ok := isConditionFailed(err); ok {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("create email job %s: %w", j.ID(), err)
		}
		s.record("CreateJobs", out.ConsumedCapacity)
		j.Version = 1
		n++
	}
	return n, nil
}

// GetJob reads one job (strongly consistent).
func (s *Emails) GetJob(ctx context.Context, id string) (*emailjobs.Job, error) {
	subject, name, ok := emailjobs.ParseJobID(id)
	if !ok {
		return nil, emailjobs.ErrNotFound
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(emailPK(subject), emailSK(name)), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("read email job %s: %w", id, err)
	}
	s.record("GetJob", out.ConsumedCapacity)
	if out.Item == nil {
		return nil, emailjobs.ErrNotFound
	}
	return jobFrom(out.Item)
}

// SaveJob rewrites j conditional on its version and bumps it.
func (s *Emails) SaveJob(ctx context.Context, j *emailjobs.Job, due time.Time, isDue bool) error {
	item, err := jobAV(j, j.Version+1, due, isDue)
	if err != nil {
		return err
	}
	x := newExprs()
	out, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: item,
		ConditionExpression:      aws.String(x.n("ver") + " = " + x.d(j.Version)),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnConsumedCapacity: s.rcc(),
	})
	if _, ok := isConditionFailed(err); ok {
		return emailjobs.ErrStateChanged
	}
	if err != nil {
		return fmt.Errorf("save email job %s: %w", j.ID(), err)
	}
	s.record("SaveJob", out.ConsumedCapacity)
	j.Version++
	return nil
}

// OrderJobs returns an order's jobs in name order (a strongly consistent Query).
func (s *Emails) OrderJobs(ctx context.Context, orderID string) ([]*emailjobs.Job, error) {
	if !validID(orderID) {
		return nil, nil
	}
	x := newExprs()
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                aws.String(s.table),
		KeyConditionExpression:   aws.String(x.n("PK") + " = " + x.s(emailPK(orderID)) + " AND begins_with(" + x.n("SK") + ", " + x.s("JOB#") + ")"),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ConsistentRead: aws.Bool(true), Limit: aws.Int32(100), ReturnConsumedCapacity: s.rcc(),
	})
	if err != nil {
		return nil, fmt.Errorf("query email jobs of %s: %w", orderID, err)
	}
	s.record("OrderJobs", out.ConsumedCapacity)
	jobs := make([]*emailjobs.Job, 0, len(out.Items))
	for _, it := range out.Items {
		j, err := jobFrom(it)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// OverdueJobs reads the due index EMDUE#0..63 up to now, oldest first.
func (s *Emails) OverdueJobs(ctx context.Context, now time.Time, limit int) ([]*emailjobs.Job, error) {
	if limit <= 0 {
		return nil, nil
	}
	items, err := s.shardQuery(ctx, "OverdueJobs", "GSI3", emailDueShards,
		func(i int) string { return emailDuePK(uint32(i)) }, "<=", orderSortKey(now, "~"), limit, nil)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(items, func(a, b int) bool { return attrS(items[a], "GSI3SK") < attrS(items[b], "GSI3SK") })
	res := make([]*emailjobs.Job, 0, min(len(items), limit))
	for _, it := range items {
		if len(res) == limit {
			break
		}
		j, err := jobFrom(it)
		if err != nil {
			return nil, err
		}
		res = append(res, j)
	}
	return res, nil
}

// dispatchJobs are the transaction puts of an event's email jobs.
func (s *Webhooks) dispatchJobs(jobs []*emailjobs.Job) ([]types.TransactWriteItem, error) {
	items := make([]types.TransactWriteItem, 0, len(jobs))
	for _, j := range jobs {
		if j.OrderID == "" {
			return nil, fmt.Errorf("email job %s in a dispatch is not an order's", j.ID())
		}
		p, err := s.jobPut(j)
		if err != nil {
			return nil, err
		}
		items = append(items, types.TransactWriteItem{Put: p})
	}
	return items, nil
}
