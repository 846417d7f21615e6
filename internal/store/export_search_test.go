package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// PutOrderItems writes orders' items as CreateOrder writes them (orderAV),
// 25 to a BatchWriteItem, without their stock: the buyer lookup benchmark's
// 100,000 orders. Without withBuyerKeys they lack the buyer index keys, as
// the orders written before the index did.
func (s *Store) PutOrderItems(ctx context.Context, orders []*ticketing.Order, withBuyerKeys bool) error {
	for len(orders) > 0 {
		n := min(25, len(orders))
		var reqs []types.WriteRequest
		for _, o := range orders[:n] {
			item, err := orderAV(o, 1)
			if err != nil {
				return err
			}
			if !withBuyerKeys {
				delete(item, "GSI3PK")
				delete(item, "GSI3SK")
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		for len(reqs) > 0 {
			out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: reqs}})
			if err != nil {
				return fmt.Errorf("write orders: %w", err)
			}
			reqs = out.UnprocessedItems[s.table]
		}
		orders = orders[n:]
	}
	return nil
}
