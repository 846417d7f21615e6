package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// A tier counter written before stock was sharded is shard 0 of its tier:
// what it counts stays sold, and an order line that records no shards gives
// its units back there.
func TestUnshardedCounterIsShardZero(t *testing.T) {
	r := newLateRace(t)
	ctx := context.Background()
	legacy := map[string]types.AttributeValue{
		"PK":   &types.AttributeValueMemberS{Value: "STK#" + ticketingtest.EventID + "#test"},
		"SK":   &types.AttributeValueMemberS{Value: ticketing.NoOccurrence + "#T#" + ticketingtest.GATier},
		"sold": &types.AttributeValueMemberN{Value: "3"},
	}
	if _, err := r.st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(r.st.TableName()), Item: legacy}); err != nil {
		t.Fatal(err)
	}
	sold := func() (int, map[int]int) {
		st, err := r.st.Catalog.GetStock(ctx, ticketingtest.EventID, ticketing.EnvTest, "")
		if err != nil {
			t.Fatal(err)
		}
		k := ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: ticketingtest.GATier}
		return st.Sold[k], st.Shards[k]
	}
	if n, shards := sold(); n != 3 || shards[0] != 3 {
		t.Fatalf("legacy counter: sold %d, shards %v, want 3 in shard 0", n, shards)
	}
	if err := r.st.Orders.CreateOrder(ctx, r.order(3, ""), r.e, r.now); err == nil {
		t.Fatalf("3 more of a tier of %d with 3 sold: accepted", ticketingtest.GACap)
	}
	o := r.order(2, "")
	if err := r.st.Orders.CreateOrder(ctx, o, r.e, r.now); err != nil {
		t.Fatal(err)
	}
	if n, _ := sold(); n != ticketingtest.GACap {
		t.Fatalf("sold %d, want %d", n, ticketingtest.GACap)
	}
	// An order of before the sharding: its line names no shard.
	c := *o
	c.Lines = []ticketing.OrderLine{o.Lines[0]}
	c.Lines[0].Shards = nil
	c.Status, c.CancelReason = ticketing.OrderCancelled, "expired"
	if err := r.st.Orders.CancelOrder(ctx, &c, r.event(ticketing.EventOrderCancelled, &c), r.now, false); err != nil {
		t.Fatal(err)
	}
	if n, shards := sold(); n != 3 || shards[0] != 3 {
		t.Fatalf("after cancelling a line without shards: sold %d, shards %v, want 3 in shard 0", n, shards)
	}
}

// A transaction that finds both the key bound and the stock short reports the
// key (DynamoDB lists every failed condition, in item order): the request is
// then answered as a repeat, not as sold out. Stock short with the key free
// says the key was free.
func TestCreateOrderWithKey_KeyBeforeStock(t *testing.T) {
	r := newLateRace(t)
	ctx := context.Background()
	rec := func(id string) *ticketing.Idempotency {
		return &ticketing.Idempotency{Tenant: ticketing.Tenant{OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest},
			Scope: ticketing.IdemOrder, Key: "k", RequestHash: "h", ResourceID: id, Lease: "l", LeaseUntil: r.now.Add(time.Minute), CreatedAt: r.now}
	}
	first := r.order(ticketingtest.GACap, "")
	if err := r.st.Orders.CreateOrderWithKey(ctx, first, r.e, rec(first.ID), r.now); err != nil {
		t.Fatal(err)
	}
	again := r.order(1, "")
	err := r.st.Orders.CreateOrderWithKey(ctx, again, r.e, rec(again.ID), r.now)
	var taken *ticketing.IdempotencyTakenError
	if !errors.As(err, &taken) || taken.Existing == nil || taken.Existing.ResourceID != first.ID {
		t.Fatalf("bound key and sold out: %v, want the key taken by %s", err, first.ID)
	}
	other := rec(again.ID)
	other.Key = "other"
	err = r.st.Orders.CreateOrderWithKey(ctx, again, r.e, other, r.now)
	var se *ticketing.StockError
	if !errors.As(err, &se) || !se.KeyFree {
		t.Fatalf("free key and sold out: %v (%+v), want a stock error with the key free", err, se)
	}
	if _, err := r.st.Idempotency.GetIdempotency(ctx, other.Tenant, other.Scope, other.Key); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Fatalf("a refused order bound its key: %v", err)
	}
}
