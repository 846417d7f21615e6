package main

import (
	"context"
	"strings"
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

// TestMeterBillsTransactionsPerItem: a transaction of four small puts and
// one of about 1.5 KB, through the proxy on DynamoDB Local. AWS bills 2
// units per KB of each item, rounded up item by item: 4 x 2 + 2 x 2 = 12
// WCU, 2 on each small item's partition and 4 on the large one's. Local
// reports 2 units per KB of the total (about 1.7 KB: 4 WCU); the meter's
// bill is AWS's. An update of the large item in a later transaction is
// billed by the size its put had (4), a check of an unknown item as 2.
func TestMeterBillsTransactionsPerItem(t *testing.T) {
	schema := Schema{PK: store.Table.PartitionKey, SK: store.Table.SortKey, Indexes: map[string]string{}}
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
	table := testenv.UniqueName("tix-onsale-bill")
	if _, err := db.CreateTable(ctx, store.Table.CreateTableInput(table)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	}()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	put := func(pk string, extra int) types.TransactWriteItem {
		item := map[string]types.AttributeValue{"PK": s(pk), "SK": s("X")}
		if extra > 0 {
			item["blob"] = s(strings.Repeat("x", extra))
		}
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item}}
	}
	m.Phase("bill")
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		put("A", 0), put("B", 0), put("C", 0), put("D", 0), put("BIG", 1500)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: aws.String(table), Key: map[string]types.AttributeValue{"PK": s("BIG"), "SK": s("X")},
			UpdateExpression: aws.String("SET n = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": s("1")}}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table), Key: map[string]types.AttributeValue{"PK": s("A"), "SK": s("NONE")},
			ConditionExpression: aws.String("attribute_not_exists(PK)")}}}}); err != nil {
		t.Fatal(err)
	}
	usage, _, _ := m.Usage("bill")
	want := map[Partition]Units{{Key: "A"}: {W: 2 + 2}, {Key: "B"}: {W: 2}, {Key: "C"}: {W: 2}, {Key: "D"}: {W: 2}, {Key: "BIG"}: {W: 4 + 4}}
	total := 0.0
	for p, u := range usage {
		total += u.W
		if want[p] != u {
			t.Errorf("%s: %+v, want %+v", p, u, want[p])
		}
	}
	if total != 12+6 {
		t.Errorf("billed %.1f WCU, want 18 (12 for the puts, 4 + 2 for the update and the check): %v", total, usage)
	}
}
