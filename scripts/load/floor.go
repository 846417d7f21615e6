package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// floorResult is what the floor measured at one client count.
type floorResult struct {
	created int
	elapsed time.Duration
}

func (f floorResult) perSecond() float64 { return float64(f.created) / f.elapsed.Seconds() }

// runFloor is the bare floor an order could cost on the same emulator: per
// order one TransactWriteItems of a conditional counter update (never past
// capacity) and two conditional puts (the order and its key's record),
// orders attempts from conc clients at once, with no HTTP, no
// authentication and no pricing. tix's orders/s are quoted against it.
func runFloor(ctx context.Context, db *dynamodb.Client, table, run string, orders, conc, qty, capacity int) (floorResult, error) {
	var (
		next    atomic.Int64
		created atomic.Int64
		wg      sync.WaitGroup
		mu      sync.Mutex
		failure error
	)
	counter := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "FLOOR#" + run}, "SK": &types.AttributeValueMemberS{Value: "C"}}
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(orders) {
					return
				}
				ok, err := floorOrder(ctx, db, table, run, counter, i, qty, capacity)
				if err != nil {
					mu.Lock()
					failure = err
					mu.Unlock()
					return
				}
				if ok {
					created.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return floorResult{created: int(created.Load()), elapsed: time.Since(start)}, failure
}

// floorOrder writes one floor order; false when the counter is at capacity.
func floorOrder(ctx context.Context, db *dynamodb.Client, table, run string, counter map[string]types.AttributeValue, i int64, qty, capacity int) (bool, error) {
	id := run + "#" + strconv.FormatInt(i, 10)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	items := []types.TransactWriteItem{
		{Update: &types.Update{TableName: aws.String(table), Key: counter,
			UpdateExpression:          aws.String("ADD sold :q"),
			ConditionExpression:       aws.String("attribute_not_exists(sold) OR sold <= :max"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":q": n(qty), ":max": n(capacity - qty)}}},
		{Put: &types.Put{TableName: aws.String(table), ConditionExpression: aws.String("attribute_not_exists(PK)"),
			Item: map[string]types.AttributeValue{"PK": s("FLOORORD#" + id), "SK": s("ORDER"), "qty": n(qty), "st": s("pending")}}},
		{Put: &types.Put{TableName: aws.String(table), ConditionExpression: aws.String("attribute_not_exists(PK)"),
			Item: map[string]types.AttributeValue{"PK": s("FLOORIDEM#" + id), "SK": s("IDEM"), "order": s(id)}}},
	}
	for attempt := 0; ; attempt++ {
		_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		var tce *types.TransactionCanceledException
		switch {
		case err == nil:
			return true, nil
		case !errors.As(err, &tce):
			return false, fmt.Errorf("floor order %s: %w", id, err)
		}
		for _, r := range tce.CancellationReasons {
			if r.Code != nil && *r.Code == "ConditionalCheckFailed" {
				return false, nil
			}
		}
		if attempt >= 8 { // a conflict, retried as tix retries them
			return false, fmt.Errorf("floor order %s: %w", id, err)
		}
		time.Sleep(time.Duration(5<<attempt) * time.Millisecond)
	}
}
