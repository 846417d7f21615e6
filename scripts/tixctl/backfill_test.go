package main

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// An order whose item lacks the buyer index keys (written before the index
// held orders) is found by email after orders backfill-buyer-index; a
// second run updates nothing.
func TestOrdersBackfillBuyerIndex(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()
	now := time.Now().UTC()
	o := &ticketing.Order{ID: "ord_cliBackfill1", OrganizerID: "org_cli", Environment: ticketing.EnvTest, Type: "ticket",
		Status: ticketing.OrderPending, EventID: "evt_cli", Quantity: 1, Currency: "RUB", Buyer: ticketing.Buyer{Email: "old@example.com"},
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.Orders.CreateOrder(ctx, o, &ticketing.Event{ID: "evt_cli"}, now); err != nil {
		t.Fatal(err)
	}
	_, err := st.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.TableName()),
		Key:              map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "ORD#" + o.ID}, "SK": &types.AttributeValueMemberS{Value: "ORDER"}},
		UpdateExpression: aws.String("REMOVE GSI3PK, GSI3SK")})
	if err != nil {
		t.Fatal(err)
	}
	tenant := ticketing.Tenant{OrganizerID: "org_cli", Environment: ticketing.EnvTest}
	if got, err := st.Search.OrdersByBuyer(ctx, tenant, "old@example.com", 10); err != nil || len(got) != 0 {
		t.Fatalf("an order without keys: %v, %v", got, err)
	}
	var v map[string]any
	c.json(0, &v, "orders", "backfill-buyer-index")
	if len(v) != 1 || v["updated"] != float64(1) {
		t.Fatalf("--json %v, want {\"updated\": 1}", v)
	}
	if got, err := st.Search.OrdersByBuyer(ctx, tenant, "OLD@example.com", 10); err != nil || len(got) != 1 || got[0].ID != o.ID {
		t.Fatalf("after the backfill: %v, %v", got, err)
	}
	c.json(0, &v, "orders", "backfill-buyer-index")
	if v["updated"] != float64(0) {
		t.Fatalf("a second run: %v", v)
	}
}
