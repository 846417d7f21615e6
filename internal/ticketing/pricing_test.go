package ticketing_test

import (
	"context"
	"testing"

	"tix/internal/ticketing"
)

func standing(items ...any) *[]ticketing.StandingItem {
	var out []ticketing.StandingItem
	for i := 0; i < len(items); i += 2 {
		out = append(out, ticketing.StandingItem{TierID: ptr(items[i].(string)), Qty: ptr(items[i+1].(int))})
	}
	return &out
}

func TestPreview_PricesFromTheCatalogWithPromoCodes(t *testing.T) {
	cases := []struct {
		name                  string
		req                   ticketing.OrderRequest
		qty                   int
		base, discount, total int64
	}{
		{"one GA ticket by default", ticketing.OrderRequest{TierID: ptr(priceGA)}, 1, 150000, 0, 150000},
		{"GA quantity", ticketing.OrderRequest{TierID: ptr(priceGA), Quantity: ptr(3)}, 3, 450000, 0, 450000},
		{"a standing tier by tier_id is the same line", ticketing.OrderRequest{TierID: ptr(priceFront), Quantity: ptr(2)}, 2, 500000, 0, 500000},
		{"several standing tiers", ticketing.OrderRequest{StandingItems: standing(priceFront, 2, priceBack, 3)}, 5, 799997, 0, 799997},
		{"percent", ticketing.OrderRequest{TierID: ptr(priceGA), Quantity: ptr(3), PromoCode: ptr("PCT10")}, 3, 450000, 45000, 405000},
		{"percent rounds down to the kopeck", ticketing.OrderRequest{TierID: ptr(priceBack), Quantity: ptr(3), PromoCode: ptr("PCT15")}, 3, 299997, 44999, 254998},
		{"codes compare case-insensitively", ticketing.OrderRequest{TierID: ptr(priceGA), PromoCode: ptr(" pct10 ")}, 1, 150000, 15000, 135000},
		{"fixed", ticketing.OrderRequest{TierID: ptr(priceGA), Quantity: ptr(2), PromoCode: ptr("FIX500")}, 2, 300000, 50000, 250000},
		{"fixed never exceeds the order", ticketing.OrderRequest{TierID: ptr(priceGA), PromoCode: ptr("HUGE")}, 1, 150000, 150000, 0},
		{"a tier-bound code discounts only its tier", ticketing.OrderRequest{StandingItems: standing(priceFront, 1, priceBack, 1), PromoCode: ptr("FRONT20")},
			2, 349999, 50000, 299999},
		{"a code with max_uses before its last use", ticketing.OrderRequest{TierID: ptr(priceGA), PromoCode: ptr("ONCE")}, 1, 150000, 10000, 140000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDomain(t)
			c.req.EventID = ptr(priceEvent)
			p, err := d.sales.Pricing.Preview(context.Background(), d.c, c.req)
			if err != nil {
				t.Fatal(err)
			}
			if p.Quantity != c.qty || p.BasePrice != c.base || p.Discount != c.discount || p.Total != c.total {
				t.Fatalf("priced %d units, base %d, discount %d, total %d; want %d, %d, %d, %d",
					p.Quantity, p.BasePrice, p.Discount, p.Total, c.qty, c.base, c.discount, c.total)
			}
			if (p.Promo != nil) != (c.discount > 0) || p.Promo != nil && p.Promo.Discount != c.discount {
				t.Fatalf("applied promo %+v, want a discount of %d", p.Promo, c.discount)
			}
		})
	}
}

func TestPreview_PromoCodeRefusedWithOneAnswer(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	if _, err := d.sales.Orders.CreateOrder(ctx, d.c, "use-once", ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: ptr("a@example.com")},
		TierID: ptr(priceGA), PromoCode: ptr("ONCE")}); err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]ticketing.OrderRequest{
		"unknown":          {TierID: ptr(priceGA), PromoCode: ptr("NOPE")},
		"expired":          {TierID: ptr(priceGA), PromoCode: ptr("EXPIRED")},
		"not yet valid":    {TierID: ptr(priceGA), PromoCode: ptr("LATER")},
		"for another tier": {TierID: ptr(priceGA), PromoCode: ptr("FRONT20")},
		"used up":          {TierID: ptr(priceGA), PromoCode: ptr("ONCE")},
		"another event's":  {TierID: ptr("tier_conf_ga"), PromoCode: ptr("PCT10")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := d.sales.Pricing.Preview(ctx, d.c, req)
			wantCode(t, err, ticketing.CodeInvalidRequest, "promo_code")
		})
	}
}

func TestCreateOrder_TotalIsTheCatalogPriceWithoutFees(t *testing.T) {
	d := newDomain(t)
	o := d.order(t, "fees", ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: ptr("a@example.com")},
		StandingItems: standing(priceFront, 1, priceBack, 2), PromoCode: ptr("PCT10")})
	if o.ServiceFee != 0 || o.BasePrice != 449998 || o.Discount != 44999 || o.TotalPrice != o.BasePrice-o.Discount {
		t.Fatalf("order base %d, discount %d, fee %d, total %d", o.BasePrice, o.Discount, o.ServiceFee, o.TotalPrice)
	}
	if o.Currency != "RUB" || o.Quantity != 3 || len(o.Lines) != 2 || o.Lines[1].UnitPrice != 99999 {
		t.Fatalf("order lines %+v", o)
	}
}

func TestCreateOrder_RefusesWhatCannotBePaid(t *testing.T) {
	d := newDomain(t)
	buyer := &ticketing.BuyerInput{Email: ptr("a@example.com")}
	_, err := d.sales.Orders.CreateOrder(context.Background(), d.c, "free", ticketing.OrderRequest{Buyer: buyer, TierID: ptr(priceFree)})
	wantCode(t, err, ticketing.CodeUnsupported, "")
	_, err = d.sales.Orders.CreateOrder(context.Background(), d.c, "zero", ticketing.OrderRequest{Buyer: buyer, TierID: ptr(priceGA), PromoCode: ptr("HUGE")})
	wantCode(t, err, ticketing.CodeUnsupported, "promo_code")
	// A refused order frees its Idempotency-Key for a corrected retry.
	if _, err := d.sales.Orders.CreateOrder(context.Background(), d.c, "zero", ticketing.OrderRequest{Buyer: buyer, TierID: ptr(priceGA)}); err != nil {
		t.Fatalf("corrected retry under the same key: %v", err)
	}
}
