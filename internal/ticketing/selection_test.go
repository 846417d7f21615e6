package ticketing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

func rids(n int) *[]string {
	var out []string
	for i := range n {
		out = append(out, "rsv_"+string(rune('a'+i)))
	}
	return &out
}

func TestSelection_BadInputIsInvalidRequestNamingTheParam(t *testing.T) {
	ga := ptr(ticketingtest.GATier)
	cases := []struct {
		name  string
		req   ticketing.OrderRequest
		param string
	}{
		{"no selection", ticketing.OrderRequest{}, "tier_id"},
		{"two selections", ticketing.OrderRequest{TierID: ga, SeatReservationIDs: rids(1)}, "seat_reservation_ids"},
		{"quantity without tier_id", ticketing.OrderRequest{StandingItems: standing(priceFront, 1), Quantity: ptr(1)}, "quantity"},
		{"empty event_id", ticketing.OrderRequest{TierID: ga, EventID: ptr("")}, "event_id"},
		{"empty occurrence_id", ticketing.OrderRequest{TierID: ga, OccurrenceID: ptr("")}, "occurrence_id"},
		{"blank promo code", ticketing.OrderRequest{TierID: ga, PromoCode: ptr("  ")}, "promo_code"},
		{"empty tier_id", ticketing.OrderRequest{TierID: ptr("")}, "tier_id"},
		{"quantity 0", ticketing.OrderRequest{TierID: ga, Quantity: ptr(0)}, "quantity"},
		{"quantity over the order limit", ticketing.OrderRequest{TierID: ga, Quantity: ptr(ticketing.MaxUnitsPerOrder + 1)}, "quantity"},
		{"no reservations", ticketing.OrderRequest{SeatReservationIDs: rids(0)}, "seat_reservation_ids"},
		{"too many reservations", ticketing.OrderRequest{SeatReservationIDs: rids(ticketing.MaxUnitsPerOrder + 1)}, "seat_reservation_ids"},
		{"empty reservation", ticketing.OrderRequest{SeatReservationIDs: &[]string{"rsv_a", ""}}, "seat_reservation_ids[1]"},
		{"reservation twice", ticketing.OrderRequest{SeatReservationIDs: &[]string{"rsv_a", "rsv_a"}}, "seat_reservation_ids[1]"},
		{"no standing items", ticketing.OrderRequest{StandingItems: &[]ticketing.StandingItem{}}, "standing_items"},
		{"standing item without tier", ticketing.OrderRequest{StandingItems: &[]ticketing.StandingItem{{Qty: ptr(1)}}}, "standing_items[0].tier_id"},
		{"standing tier twice", ticketing.OrderRequest{StandingItems: standing(priceFront, 1, priceFront, 1)}, "standing_items[1].tier_id"},
		{"standing item without qty", ticketing.OrderRequest{StandingItems: &[]ticketing.StandingItem{{TierID: ptr(priceFront)}}}, "standing_items[0].qty"},
		{"standing qty 0", ticketing.OrderRequest{StandingItems: standing(priceFront, 0)}, "standing_items[0].qty"},
		{"standing total over the limit", ticketing.OrderRequest{StandingItems: standing(priceFront, 6, priceBack, 5)}, "standing_items[1].qty"},
		{"buyer in a preview", ticketing.OrderRequest{TierID: ga, Buyer: &ticketing.BuyerInput{}}, "buyer"},
		{"return_url in a preview", ticketing.OrderRequest{TierID: ga, ReturnURL: ptr("https://x.example")}, "return_url"},
		// Rules that need the catalog.
		{"unknown tier", ticketing.OrderRequest{TierID: ptr("tier_unknown")}, "tier_id"},
		{"a seated tier by tier_id", ticketing.OrderRequest{TierID: ptr(ticketingtest.SeatTier)}, "tier_id"},
		{"a GA tier as a standing item", ticketing.OrderRequest{StandingItems: standing(priceGA, 1)}, "standing_items[0].tier_id"},
		{"occurrence_id of a single event", ticketing.OrderRequest{TierID: ga, OccurrenceID: ptr("occ_1")}, "occurrence_id"},
		{"tiers of two events", ticketing.OrderRequest{StandingItems: &[]ticketing.StandingItem{
			{TierID: ptr(priceFront), Qty: ptr(1)}, {TierID: ptr(ticketingtest.GATier), Qty: ptr(1)}}}, "standing_items[1].tier_id"},
		{"unknown reservation", ticketing.OrderRequest{SeatReservationIDs: &[]string{"rsv_nothing"}}, "seat_reservation_ids[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDomain(t)
			_, err := d.sales.Pricing.Preview(context.Background(), d.c, c.req)
			var e *ticketing.Error
			if !errors.As(err, &e) || e.Param != c.param || e.Code == ticketing.CodeInternal {
				t.Fatalf("error %v, want one naming %s", err, c.param)
			}
		})
	}
}

func TestCreateOrder_BuyerAndPaymentRules(t *testing.T) {
	ga := ptr(ticketingtest.GATier)
	cases := []struct {
		name  string
		req   ticketing.OrderRequest
		code  ticketing.Code
		param string
	}{
		{"no buyer", ticketing.OrderRequest{TierID: ga}, ticketing.CodeInvalidRequest, "buyer"},
		{"no email", ticketing.OrderRequest{TierID: ga, Buyer: &ticketing.BuyerInput{}}, ticketing.CodeInvalidRequest, "buyer.email"},
		{"bad email", ticketing.OrderRequest{TierID: ga, Buyer: &ticketing.BuyerInput{Email: ptr("a@b")}}, ticketing.CodeInvalidRequest, "buyer.email"},
		{"domain literal email", ticketing.OrderRequest{TierID: ga, Buyer: &ticketing.BuyerInput{Email: ptr("a@[127.0.0.1]")}}, ticketing.CodeInvalidRequest, "buyer.email"},
		{"bad phone", ticketing.OrderRequest{TierID: ga, Buyer: &ticketing.BuyerInput{Email: ptr("a@example.com"), Phone: ptr("call me")}}, ticketing.CodeInvalidRequest, "buyer.phone"},
		{"http return_url", ticketing.OrderRequest{TierID: ga, Buyer: &ticketing.BuyerInput{Email: ptr("a@example.com")}, ReturnURL: ptr("http://x.example")}, ticketing.CodeInvalidRequest, "return_url"},
		{"card payment", ticketing.OrderRequest{TierID: ga, Buyer: &ticketing.BuyerInput{Email: ptr("a@example.com")}, PaymentMethod: ptr("card")}, ticketing.CodeUnsupported, "payment_method"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDomain(t)
			_, err := d.sales.Orders.CreateOrder(context.Background(), d.c, "k", c.req)
			wantCode(t, err, c.code, c.param)
			if n := d.gaSold(t); n != 0 {
				t.Fatalf("a refused order took %d tickets", n)
			}
		})
	}
}

// Every limit of a selection is inclusive: MaxUnitsPerOrder tickets by
// quantity, by standing items in all and one at least each are accepted;
// MaxUnitsPerOrder reservations pass the count rule (the next rule, that
// they exist, finds the first missing).
func TestSelection_LimitsAreInclusive(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	for name, req := range map[string]ticketing.OrderRequest{
		"quantity at the order limit":    {TierID: ptr(priceGA), Quantity: ptr(ticketing.MaxUnitsPerOrder)},
		"quantity 1":                     {TierID: ptr(priceGA), Quantity: ptr(1)},
		"standing total at the limit":    {StandingItems: standing(priceFront, ticketing.MaxUnitsPerOrder-1, priceBack, 1)},
		"one standing item at the limit": {StandingItems: standing(priceFront, ticketing.MaxUnitsPerOrder)},
	} {
		if _, err := d.sales.Pricing.Preview(ctx, d.c, req); err != nil {
			t.Errorf("%s: %v, want a price", name, err)
		}
	}
	_, err := d.sales.Pricing.Preview(ctx, d.c, ticketing.OrderRequest{SeatReservationIDs: rids(ticketing.MaxUnitsPerOrder)})
	wantCode(t, err, ticketing.CodeNotFound, "seat_reservation_ids[0]")
}

// The buyer's fields have inclusive limits: an email of 254 characters, a
// name of 200, a phone of 32 and a return_url of 2,048 are taken (the phone
// trimmed); one more character is refused, naming the field.
func TestCreateOrder_BuyerLimitsAreInclusive(t *testing.T) {
	email := strings.Repeat("a", 254-len("@example.com")) + "@example.com"
	name := strings.Repeat("n", 200)
	phone := "+7 (999) 123-45-67" + strings.Repeat("0", 32-len("+7 (999) 123-45-67"))
	returnURL := "https://shop.example/" + strings.Repeat("r", 2048-len("https://shop.example/"))
	ok := func() ticketing.OrderRequest {
		return ticketing.OrderRequest{TierID: ptr(ticketingtest.GATier), ReturnURL: ptr(returnURL),
			Buyer: &ticketing.BuyerInput{Email: ptr(email), Name: ptr(name), Phone: ptr(" " + phone + " ")}}
	}
	d := newDomain(t)
	o := d.order(t, "at-limits", ok())
	if o.Buyer.Email != email || o.Buyer.Name == nil || *o.Buyer.Name != name || o.Buyer.Phone == nil || *o.Buyer.Phone != phone {
		t.Fatalf("buyer %+v, want the fields at their limits, the phone trimmed", o.Buyer)
	}
	for param, over := range map[string]func(*ticketing.OrderRequest){
		"buyer.email": func(r *ticketing.OrderRequest) { r.Buyer.Email = ptr("a" + email) },
		"buyer.name":  func(r *ticketing.OrderRequest) { r.Buyer.Name = ptr(name + "n") },
		"buyer.phone": func(r *ticketing.OrderRequest) { r.Buyer.Phone = ptr(phone + "0") },
		"return_url":  func(r *ticketing.OrderRequest) { r.ReturnURL = ptr(returnURL + "r") },
	} {
		req := ok()
		over(&req)
		_, err := d.sales.Orders.CreateOrder(context.Background(), d.c, "over-"+param, req)
		wantCode(t, err, ticketing.CodeInvalidRequest, param)
	}
}
