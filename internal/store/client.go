// Package store is the DynamoDB single-table adapter: the only package that
// imports the DynamoDB SDK. Access patterns are listed in the README.md beside it.
package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/awscfg"
	"tix/internal/clock"
)

// Options configure a Store.
type Options struct {
	Table  string
	Region string
	// Endpoint points at DynamoDB Local; empty means AWS.
	Endpoint string
	// CursorSecret signs pagination cursors so that they cannot be forged.
	CursorSecret []byte
	Clock        clock.Clock
}

// DB is the shared DynamoDB client of the store types: one table, one clock,
// one cursor secret. Each aggregate's store type (Catalog, Orders, Holds,
// Webhooks...) works over the same DB and implements the port its user declares.
type DB struct{ *core }

// core is what every store type shares: the client and the helpers all of
// them use (capacity records, transactions, sharded and bounded queries).
type core struct {
	db     *dynamodb.Client
	table  string
	cursor cursorCodec
	clock  clock.Clock
	// capacity, when set, receives the consumed capacity of every request (measurements).
	capacity func(op string, c *types.ConsumedCapacity)
	// listBudget bounds the items a listing request examines (0: DefaultListBudget).
	listBudget int
	// full remembers the outbound window shards found full this second.
	full *fullShards
	// outboxNext deals outbox events to the index shards round robin.
	outboxNext atomic.Uint32
	// shardHints are the tier shard levels this process read last (stock_shards.go).
	shardHints shardHints
	// conflictWait is the first wait after a TransactionConflict (0: 5 ms; txn.go).
	conflictWait time.Duration
}

// Store is every store type over one DB (a plain struct of them, no methods
// of its own but the DB's): wiring hands each user the one it needs.
type Store struct {
	*DB
	Catalog     *Catalog     // events, seating, stock reads, catalog import
	Orders      *Orders      // orders and the stock they take
	Search      *Search      // orders found by buyer email or ticket number
	Holds       *Holds       // seat holds
	Idempotency *Idempotency // Idempotency-Key records
	Limits      *Limits      // per-client budgets and records of publishable keys
	Due         *Due         // due-timer markers
	Keys        *Keys        // API keys, their request counters and client IPs
	Organizers  *Organizers  // organizers
	Payments    *Payments    // payment accounts, receipts, stray payments
	Webhooks    *Webhooks    // webhook endpoints, outbox, deliveries, outbound limits
	Emails      *Emails      // email jobs, identities, suppressions, recipient caps
}

// The store types, one per aggregate, each over the shared DB.
type (
	Catalog     struct{ *core }
	Orders      struct{ *core }
	Search      struct{ *core }
	Holds       struct{ *core }
	Idempotency struct{ *core }
	Limits      struct{ *core }
	Due         struct{ *core }
	Keys        struct{ *core }
	Organizers  struct{ *core }
	Payments    struct{ *core }
	Webhooks    struct{ *core }
	Emails      struct{ *core }
	Tickets     struct{ *core }
	TicketKeys  struct{ *core }
)

// NewClient builds a DynamoDB client; against a local endpoint it uses static
// dummy credentials and skips response checksums (DynamoDB Local's error bodies fail them).
func NewClient(ctx context.Context, region, endpoint string) (*dynamodb.Client, error) {
	cfg, err := awscfg.Load(ctx, region, endpoint)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.DisableValidateResponseChecksum = true
		}
	}), nil
}

// New returns a Store over an existing client.
func New(db *dynamodb.Client, opts Options) *Store {
	c := opts.Clock
	if c == nil {
		c = clock.System{}
	}
	s := &core{db: db, table: opts.Table, cursor: cursorCodec{secret: opts.CursorSecret}, clock: c,
		full: &fullShards{}}
	s.outboxNext.Store(rand.Uint32())
	return &Store{DB: &DB{s}, Catalog: &Catalog{s}, Orders: &Orders{s}, Search: &Search{s}, Holds: &Holds{s}, Idempotency: &Idempotency{s},
		Limits: &Limits{s}, Due: &Due{s}, Keys: &Keys{s}, Organizers: &Organizers{s}, Payments: &Payments{s},
		Webhooks: &Webhooks{s}, Emails: &Emails{s}}
}

// Open builds the client and the Store.
func Open(ctx context.Context, opts Options) (*Store, error) {
	db, err := NewClient(ctx, opts.Region, opts.Endpoint)
	if err != nil {
		return nil, err
	}
	return New(db, opts), nil
}

// Tickets is the tickets' door state (check-ins, refund locks) and
// TicketKeys the organizers' ticket signing keys. They are methods, not
// fields of Store, so that the functions without the door (app.EnableDoor)
// do not link them: a field's type is kept with its methods wherever Store
// is used as an interface.
func (s *DB) Tickets() *Tickets { return &Tickets{s.core} }

// TicketKeys is the organizers' ticket signing keys (see Tickets).
func (s *DB) TicketKeys() *TicketKeys { return &TicketKeys{s.core} }

// Client exposes the DynamoDB client (for table administration in tools and tests).
func (s *DB) Client() *dynamodb.Client { return s.db }

// TableName is the table the store works on.
func (s *DB) TableName() string { return s.table }

// OnCapacity registers a callback receiving each request's consumed capacity;
// every request then asks for it (ReturnConsumedCapacity TOTAL). For measurements.
func (s *DB) OnCapacity(f func(op string, c *types.ConsumedCapacity)) { s.capacity = f }

func (s *core) rcc() types.ReturnConsumedCapacity {
	if s.capacity != nil {
		return types.ReturnConsumedCapacityTotal
	}
	return types.ReturnConsumedCapacityNone
}

func (s *core) record(op string, c *types.ConsumedCapacity) {
	if s.capacity != nil {
		s.capacity(op, c)
	}
}

// EnsureTable creates the table (and its TTL setting) if it does not exist and
// waits until it is active. It reports whether it created it.
func (s *DB) EnsureTable(ctx context.Context) (bool, error) {
	_, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
	if err == nil {
		return false, nil
	}
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) {
		return false, fmt.Errorf("describe table %s: %w", s.table, err)
	}
	if _, err := s.db.CreateTable(ctx, Table.CreateTableInput(s.table)); err != nil {
		var inUse *types.ResourceInUseException
		if !errors.As(err, &inUse) {
			return false, fmt.Errorf("create table %s: %w", s.table, err)
		}
	}
	w := dynamodb.NewTableExistsWaiter(s.db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)}, 2*time.Minute); err != nil {
		return false, fmt.Errorf("wait for table %s: %w", s.table, err)
	}
	_, err = s.db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(s.table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(Table.TTLAttribute), Enabled: aws.Bool(true),
		},
	})
	if err != nil {
		return true, fmt.Errorf("enable TTL on %s: %w", s.table, err)
	}
	return true, nil
}

// DeleteTable drops the table (tests).
func (s *DB) DeleteTable(ctx context.Context) error {
	_, err := s.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(s.table)})
	return err
}

// Ping checks that DynamoDB answers (for /health): one GetItem of a key that never
// exists, which needs no extra permission and costs half a read unit.
func (s *DB) Ping(ctx context.Context) error {
	_, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table),
		Key:       keyOf("HEALTH", "HEALTH"),
	})
	return err
}

func isConditionFailed(err error) (*types.ConditionalCheckFailedException, bool) {
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return cf, true
	}
	return nil, false
}
