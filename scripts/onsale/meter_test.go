package main

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/store"
	"tix/internal/testenv"
)

// TestMeterOnDynamoDBLocal: through the proxy, requests that ask for no
// capacity are metered all the same, by partition: a put with an index key,
// an update of that item (its index entry found from the put), and a
// transaction, which DynamoDB Local bills at double like AWS.
func TestMeterOnDynamoDBLocal(t *testing.T) {
	schema := Schema{PK: store.Table.PartitionKey, SK: store.Table.SortKey, Indexes: map[string]string{}}
	for _, ix := range store.Table.Indexes {
		schema.Indexes[ix.Name] = ix.PartitionKey
	}
	m, url, closeProxy, err := NewMeter(testenv.DynamoEndpoint(t), schema)
	if err != nil {
		t.Fatal(err)
	}
	defer closeProxy()
	ctx := context.Background()
	db, err := store.NewClient(ctx, "", url)
	if err != nil {
		t.Fatal(err)
	}
	table := testenv.UniqueName("tix-onsale-meter")
	if _, err := db.CreateTable(ctx, store.Table.CreateTableInput(table)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	}()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	m.Phase("test")
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
		"PK": s("ORD#o1"), "SK": s("META"), "GSI1PK": s("ORDERS#org"), "GSI1SK": s("1")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{"PK": s("ORD#o1"), "SK": s("META")}, UpdateExpression: aws.String("SET st = :s"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": s("paid")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(table), Item: map[string]types.AttributeValue{"PK": s("STK#e1"), "SK": s("T")}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{"PK": s("STK#e1"), "SK": s("T")}}); err != nil {
		t.Fatal(err)
	}
	usage, _, calls := m.Usage("test")
	want := map[Partition]Units{
		{Key: "ORD#o1"}: {W: 2}, {Index: "GSI1", Key: "ORDERS#org"}: {W: 2}, // put and update, 1 WCU each
		{Key: "STK#e1"}: {W: 2, R: 0.5}, // a transactional write: 2 WCU; an eventually consistent read: 0.5 RCU
	}
	for p, u := range want {
		if usage[p] != u {
			t.Errorf("%s: %+v, want %+v (all: %v)", p, usage[p], u, usage)
		}
	}
	if calls["PutItem"] != 1 || calls["UpdateItem"] != 1 || calls["TransactWriteItems"] != 1 || calls["GetItem"] != 1 {
		t.Errorf("calls %v", calls)
	}
}
