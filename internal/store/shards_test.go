package store_test

import (
	"context"
	"testing"

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
		st, err := r.st.GetStock(ctx, ticketingtest.EventID, ticketing.EnvTest, "")
		if err != nil {
			t.Fatal(err)
		}
		k := ticketing.StockKey{Occurrence: ticketing.NoOccurrence, ID: ticketingtest.GATier}
		return st.Sold[k], st.Shards[k]
	}
	if n, shards := sold(); n != 3 || shards[0] != 3 {
		t.Fatalf("legacy counter: sold %d, shards %v, want 3 in shard 0", n, shards)
	}
	if err := r.st.CreateOrder(ctx, r.order(3, ""), r.e, r.now); err == nil {
		t.Fatalf("3 more of a tier of %d with 3 sold: accepted", ticketingtest.GACap)
	}
	o := r.order(2, "")
	if err := r.st.CreateOrder(ctx, o, r.e, r.now); err != nil {
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
	if err := r.st.CancelOrder(ctx, &c, r.event(ticketing.EventOrderCancelled, &c), r.now, false); err != nil {
		t.Fatal(err)
	}
	if n, shards := sold(); n != 3 || shards[0] != 3 {
		t.Fatalf("after cancelling a line without shards: sold %d, shards %v, want 3 in shard 0", n, shards)
	}
}
