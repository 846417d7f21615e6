package tbanksim_test

import (
	"testing"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
)

func receipt() *tbank.Receipt {
	return &tbank.Receipt{Email: "buyer@example.com", Taxation: "usn_income", FfdVersion: "1.05", Items: []tbank.ReceiptItem{
		{Name: "Standard ticket", Price: 150000, Quantity: 2, Amount: 300000, Tax: "none", PaymentMethod: "full_payment", PaymentObject: "service"},
		{Name: "VIP ticket", Price: 500000, Quantity: 1, Amount: 500000, Tax: "vat20", PaymentMethod: "full_payment", PaymentObject: "service"},
	}}
}

func TestReceipt_AcceptedWhenItAddsUp(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	if _, err := f.client.Init(ctx, tbank.InitRequest{Amount: 800000, OrderId: "ord-receipt", Receipt: receipt()}); err != nil {
		t.Fatalf("Init with a correct receipt: %v", err)
	}
}

func TestReceipt_RefusedAsTheBankRefusesIt(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	for name, broken := range map[string]func(r *tbank.Receipt){
		"items do not add up to the amount": func(r *tbank.Receipt) { r.Items[1].Price, r.Items[1].Amount = 400000, 400000 },
		"amount is not price × quantity":    func(r *tbank.Receipt) { r.Items[0].Amount = 299999 },
		"no buyer email or phone":           func(r *tbank.Receipt) { r.Email = "" },
		"unknown taxation":                  func(r *tbank.Receipt) { r.Taxation = "usn" },
		"item without a name":               func(r *tbank.Receipt) { r.Items[0].Name = "" },
		"unknown tax":                       func(r *tbank.Receipt) { r.Items[0].Tax = "vat13" },
		"unknown payment method":            func(r *tbank.Receipt) { r.Items[0].PaymentMethod = "cash" },
		"unknown payment object":            func(r *tbank.Receipt) { r.Items[0].PaymentObject = "ticket" },
		"no items":                          func(r *tbank.Receipt) { r.Items = nil },
	} {
		r := receipt()
		broken(r)
		order := "ord-bad-receipt-" + name
		_, err := f.client.Init(ctx, tbank.InitRequest{Amount: 800000, OrderId: order, Receipt: r})
		if !tbank.IsCode(err, tbank.CodeInvalidParams) {
			t.Errorf("%s: err = %v, want the bank's refusal %s", name, err, tbank.CodeInvalidParams)
		}
		if got := f.sim.Payments(order); len(got) != 0 {
			t.Errorf("%s: the refused Init created %+v", name, got)
		}
	}
}

func TestReceipt_RefundReceiptMustMatchTheRefund(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	a, err := f.client.Init(ctx, tbank.InitRequest{Amount: 800000, OrderId: "ord-refund-receipt",
		Receipt: receipt(), NotificationURL: f.receiver.URL, RedirectDueDate: tbank.DueDate(time.Now().Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.GetQr(ctx, string(a.PaymentId)); err != nil {
		t.Fatal(err)
	}
	f.pay(t, "ord-refund-receipt")
	r := receipt()
	r.Items = r.Items[:1] // 300000 back, receipt of the standard tickets
	if _, err := f.client.Cancel(ctx, tbank.CancelRequest{PaymentId: string(a.PaymentId), Amount: 500000, Receipt: r}); !tbank.IsCode(err, tbank.CodeInvalidParams) {
		t.Errorf("refund of 500000 with a 300000 receipt: err = %v, want a refusal", err)
	}
	if _, err := f.client.Cancel(ctx, tbank.CancelRequest{PaymentId: string(a.PaymentId), Amount: 300000, Receipt: r}); err != nil {
		t.Errorf("refund with its matching receipt: %v", err)
	}
}
