package ticketing_test

import (
	"reflect"
	"testing"

	"tix/internal/ticketing"
)

// A discount is spread over the receipt's lines in proportion to their
// amounts, rounded down, the last line taking what is left; a line whose
// share does not divide by its quantity has one unit take the remainder.
func TestReceiptItems_SpreadTheDiscountInProportion(t *testing.T) {
	// 99,999 and 100,000 kopecks less 1,001: the first line's share is
	// 1001*99999/199999 = 500 (of 99,999 in three units: 33,166 twice and
	// 33,167), the last line takes the other 501 (49,749 and 49,750).
	o := &ticketing.Order{EventTitle: "Show", BasePrice: 3*33333 + 2*50000, TotalPrice: 3*33333 + 2*50000 - 1001,
		Lines: []ticketing.OrderLine{{TierName: "A", UnitPrice: 33333, Quantity: 3}, {TierName: "B", UnitPrice: 50000, Quantity: 2}}}
	want := []ticketing.PaymentItem{
		{Name: "Show: A", UnitPrice: 33166, Quantity: 2}, {Name: "Show: A", UnitPrice: 33167, Quantity: 1},
		{Name: "Show: B", UnitPrice: 49749, Quantity: 1}, {Name: "Show: B", UnitPrice: 49750, Quantity: 1},
	}
	if got := o.ReceiptItems(); !reflect.DeepEqual(got, want) {
		t.Fatalf("items %+v\nwant  %+v", got, want)
	}
}

// A discount that divides by a line's quantity keeps the line whole: one
// item at the discounted unit price.
func TestReceiptItems_ADiscountThatDividesKeepsTheLineWhole(t *testing.T) {
	o := &ticketing.Order{EventTitle: "Show", BasePrice: 20000, TotalPrice: 18000,
		Lines: []ticketing.OrderLine{{TierName: "GA", UnitPrice: 10000, Quantity: 2}}}
	want := []ticketing.PaymentItem{{Name: "Show: GA", UnitPrice: 9000, Quantity: 2}}
	if got := o.ReceiptItems(); !reflect.DeepEqual(got, want) {
		t.Fatalf("items %+v, want %+v", got, want)
	}
}

// Without a discount every line is one item at its own price, named after
// the event, the tier and the seat's label when it has one; a free order's
// lines are listed at zero (its base price of zero divides nothing).
func TestReceiptItems_UndiscountedLinesAtTheirPrice(t *testing.T) {
	o := &ticketing.Order{EventTitle: "Show", BasePrice: 50000, TotalPrice: 50000, Lines: []ticketing.OrderLine{
		{TierName: "Stalls", UnitPrice: 20000, Quantity: 1, Seat: &ticketing.SeatRef{SeatID: "s1", Label: "Row 1, Seat 2"}},
		{TierName: "Stalls", UnitPrice: 20000, Quantity: 1, Seat: &ticketing.SeatRef{SeatID: "s2"}},
		{TierName: "GA", UnitPrice: 5000, Quantity: 2},
	}}
	want := []ticketing.PaymentItem{
		{Name: "Show: Stalls, Row 1, Seat 2", UnitPrice: 20000, Quantity: 1},
		{Name: "Show: Stalls", UnitPrice: 20000, Quantity: 1},
		{Name: "Show: GA", UnitPrice: 5000, Quantity: 2},
	}
	if got := o.ReceiptItems(); !reflect.DeepEqual(got, want) {
		t.Fatalf("items %+v\nwant  %+v", got, want)
	}
	free := &ticketing.Order{EventTitle: "Show", Lines: []ticketing.OrderLine{{TierName: "Free", Quantity: 2}}}
	if got := free.ReceiptItems(); !reflect.DeepEqual(got, []ticketing.PaymentItem{{Name: "Show: Free", Quantity: 2}}) {
		t.Fatalf("free order's items %+v", got)
	}
}
