package testenv_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/testenv"
)

// BenchmarkWriteBesideTransactions measures what one test's write waits for
// while another test's heavy transactions run on DynamoDB Local: a PutItem on
// one table beside 16 writers of 25-item transactions on another, with the
// two tables in one database (one key id, or a DynamoDB Local started with
// -sharedDb) or in two (two key ids, as make test gives each test process:
// testenv's init). It reports the mean and the slowest PutItem.
//
//	scripts/stack.sh start --memory (as make test starts it), then:
//	TIX_TEST_DYNAMODB_ENDPOINT=http://127.0.0.1:8000 go test -run '^$' -bench WriteBesideTransactions -benchtime 100x ./internal/testenv
func BenchmarkWriteBesideTransactions(b *testing.B) {
	endpoint := testenv.DynamoEndpoint(b)
	for _, mode := range []string{"one-database", "own-databases"} {
		b.Run(mode, func(b *testing.B) {
			busyKey, key := "busy"+strings.ReplaceAll(testenv.UniqueName("k"), "-", ""), ""
			if key = busyKey; mode == "own-databases" {
				key = "quiet" + strings.ReplaceAll(testenv.UniqueName("k"), "-", "")
			}
			busy, quiet := benchTable(b, endpoint, busyKey), benchTable(b, endpoint, key)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Go(func() { transactUntil(stop, busy, w) })
			}
			time.Sleep(time.Second) // the writers under way
			var took []time.Duration
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if _, err := quiet.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &quiet.name,
					Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}}}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			var sum time.Duration
			for _, d := range took {
				sum += d
			}
			b.ReportMetric(float64(sum.Milliseconds())/float64(len(took)), "mean-ms")
			b.ReportMetric(float64(slices.Max(took).Milliseconds()), "max-ms")
		})
	}
}

type benchDB struct {
	db   *dynamodb.Client
	name string
}

// benchTable creates a table under key id key, dropped when b ends.
func benchTable(b *testing.B, endpoint, key string) benchDB {
	b.Helper()
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(key, "local", "")})
	t := benchDB{db: db, name: testenv.UniqueName("tix-bench")}
	pk := aws.String("PK")
	if _, err := db.CreateTable(context.Background(), &dynamodb.CreateTableInput{TableName: &t.name, BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: pk, AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: pk, KeyType: types.KeyTypeHash}}}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &t.name}) })
	return t
}

// transactUntil writes 25-item transactions of 2 KB items into t until stop.
func transactUntil(stop <-chan struct{}, t benchDB, w int) {
	pad := strings.Repeat("x", 2000)
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		items := make([]types.TransactWriteItem, 25)
		for k := range items {
			items[k] = types.TransactWriteItem{Put: &types.Put{TableName: &t.name, Item: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: fmt.Sprintf("%d-%d-%d", w, i, k)}, "pad": &types.AttributeValueMemberS{Value: pad}}}}
		}
		_, _ = t.db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: items})
	}
}
