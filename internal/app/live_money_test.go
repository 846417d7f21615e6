package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// paid creates a live order of qty, pays it at the bank and waits until tix
// has it paid; it returns the order id, its payment id and the genuine
// CONFIRMED notification the bank sent for it.
func (s *liveStack) paid(key string, qty int) (id, paymentID, note string) {
	s.t.Helper()
	code, o := s.order(key, qty)
	if code != http.StatusCreated {
		s.t.Fatalf("order: %d %v", code, o)
	}
	id = o["id"].(string)
	p, err := s.sim.Settle(id, tbanksim.Pay)
	if err != nil {
		s.t.Fatal(err)
	}
	s.waitStatus(id, "paid", 10*time.Second)
	for _, d := range s.sim.Deliveries() {
		if d.OrderID == id && d.Status == tbank.StatusConfirmed {
			note = d.Body
		}
	}
	if note == "" {
		s.t.Fatalf("no CONFIRMED notification for order %s", id)
	}
	return id, p.ID, note
}

// agree checks that the bank and tix agree on a paid order left alone: the
// payment confirmed in full, nothing refunded or cancelled at the bank, the
// order paid with its tickets, no stray payment and no order.refunded.
func (s *liveStack) agree(id string, tickets int) {
	s.t.Helper()
	for _, p := range s.sim.Payments(id) {
		if p.Status != tbank.StatusConfirmed || p.Refunded != 0 {
			s.t.Errorf("bank payment %s of order %s is %s with %d refunded: want CONFIRMED, nothing refunded", p.ID, id, p.Status, p.Refunded)
		}
	}
	if code, tk := s.call("GET", "/orders/"+id+"/tickets", ""); code != http.StatusOK || len(tk["tickets"].([]any)) != tickets {
		s.t.Errorf("order %s tickets: %d %v; want paid with %d tickets", id, code, tk, tickets)
	}
	strays, err := s.app.Store.Payments.OrderStrays(context.Background(), id)
	if err != nil || len(strays) != 0 {
		s.t.Errorf("stray payments of order %s: %+v %v; want none", id, strays, err)
	}
	if n := len(s.hooks.events(s.t, "order.refunded", id)); n != 0 {
		s.t.Errorf("%d order.refunded for order %s, want 0", n, id)
	}
}

// T-Bank's Token is a SHA-256 over the sorted root values concatenated
// without separators: a captured genuine notification can be rewritten
// without breaking it. Each rewrite below keeps the Token valid (checked) and
// is replayed twice against a paid live order: tix refuses it as malformed
// (acknowledged, so the bank would not resend it), calls no Cancel, and the
// bank and tix still agree the order is paid.
func TestLive_TamperedNotificationsReplayedChangeNothing(t *testing.T) {
	s := newLiveStack(t, quick)
	variants := []struct {
		name    string
		tamper  func(body string) string
		wantErr bool
	}{
		{"amount digit moved into ErrorCode", func(b string) string {
			return strings.Replace(b, `"Amount":300000,"ErrorCode":"0"`, `"Amount":30000,"ErrorCode":"00"`, 1)
		}, false},
		{"amount null, digits in ErrorCode, extra null and empty fields", func(b string) string {
			return strings.Replace(b, `"Amount":300000,"ErrorCode":"0"`, `"Amount":null,"Extra":null,"ErrorCode":"3000000","Note":""`, 1)
		}, false},
		{"case-variant paymentid over the signed PaymentId", func(b string) string {
			return strings.Replace(b, `,"Token":`, `,"paymentid":"","Token":`, 1)
		}, false},
		{"case-variant AMOUNT after the signed Amount", func(b string) string {
			return strings.Replace(b, `"Amount":300000,"ErrorCode":"0"`, `"Amount":0,"ErrorCode":"0","AMOUNT":30000`, 1)
		}, false},
	}
	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			id, _, genuine := s.paid("e2e-tamper-"+string(rune('a'+i)), 2)
			forged := v.tamper(genuine)
			if forged == genuine {
				t.Fatalf("the rewrite did not apply to %s", genuine)
			}
			if err := tbank.CheckToken([]byte(forged), s.password); err != nil {
				t.Fatalf("the rewritten body's Token must still verify (that is the attack): %v\n%s", err, forged)
			}
			for range 2 {
				if code, body := s.notify(forged); code != http.StatusOK || body != tbank.NotificationOK {
					t.Errorf("replayed tampered notification: %d %q; want 200 OK (refused, acknowledged)", code, body)
				}
			}
			time.Sleep(time.Second) // a refund the replay started would settle (RefundAfter 200 ms)
			s.agree(id, 2)
		})
	}
}

// The organizer refunds a paid order in full in the bank's own portal: tix
// follows the bank (order refunded, tickets refunded, stock back, one
// order.refunded), and the order says the refund was made outside tix.
func TestLive_RefundInTheBanksPortalRefundsTheOrder(t *testing.T) {
	s := newLiveStack(t, quick)
	id, pay, _ := s.paid("e2e-portal-full", 2)
	if _, err := s.sim.RefundInPortal(pay, 0); err != nil {
		t.Fatal(err)
	}
	s.waitStatus(id, "refunded", 10*time.Second)
	if evs := s.waitEvents("order.refunded", id, 1); len(evs) != 1 {
		t.Fatalf("order.refunded events %+v, want one", evs)
	}
	o, err := s.app.Store.Orders.GetOrder(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if o.Refund == nil || o.Refund.Status != ticketing.RefundCompleted || o.Refund.Amount != 300000 ||
		o.OutsideRefund == nil || o.OutsideRefund.Kind != ticketing.OutsideRefundFull {
		t.Fatalf("order refund %+v, outside %+v: want completed for 300000, made outside tix", o.Refund, o.OutsideRefund)
	}
	for _, tk := range o.Tickets {
		if tk.Status != ticketing.TicketRefunded {
			t.Errorf("ticket %s is %s, want refunded", tk.Number, tk.Status)
		}
	}
	if _, av := s.call("GET", "/events/"+liveEvent+"/availability", ""); availableOf(av) != 10 {
		t.Errorf("available %d after the refund, want all 10 back", availableOf(av))
	}
	if p := s.sim.Payments(id)[0]; p.Status != tbank.StatusRefunded || p.Refunded != p.Amount {
		t.Errorf("bank payment %+v: want refunded once, in full (tix must not Cancel again)", p)
	}
}

// The organizer refunds part of a paid order in the bank's portal: the order
// stays paid with its tickets (which ones the money was for only the
// organizer knows), flagged for the operator, and the owner is alerted once.
func TestLive_PartialRefundInTheBanksPortalFlagsTheOrderAndAlerts(t *testing.T) {
	opts := quick
	opts.mail = true
	s := newLiveStack(t, opts)
	ctx := context.Background()
	if _, err := s.app.Store.Emails.SetContacts(ctx, liveOrg, []string{"owner@example.com"}); err != nil {
		t.Fatal(err)
	}
	id, pay, _ := s.paid("e2e-portal-part", 2)
	if _, err := s.sim.RefundInPortal(pay, 150000); err != nil {
		t.Fatal(err)
	}
	var o *ticketing.Order
	testenv.WaitFor(t, 10*time.Second, "the order flagged", func() bool {
		var err error
		o, err = s.app.Store.Orders.GetOrder(ctx, id)
		return err == nil && o.OutsideRefund != nil
	})
	if o.Status != ticketing.OrderPaid || o.OutsideRefund.Kind != ticketing.OutsideRefundPartial || o.OutsideRefund.PaymentID != pay || o.Refund != nil {
		t.Fatalf("order %s status %s, outside refund %+v, refund %+v: want paid, flagged partial", id, o.Status, o.OutsideRefund, o.Refund)
	}
	job, err := s.app.Store.Emails.GetJob(ctx, liveOrg+"/alert.partly_refunded_outside."+id+".0")
	if err != nil || job.Alert == nil || job.Alert.OrderID != id || job.To != "owner@example.com" {
		t.Fatalf("owner alert job %+v, %v: want one for order %s to the owner", job, err, id)
	}
	if p := s.sim.Payments(id)[0]; p.Status != tbank.StatusPartialRefunded || p.Refunded != 150000 {
		t.Errorf("bank payment %+v: want PARTIAL_REFUNDED 150000 (tix must not Cancel the rest)", p)
	}
}

// A payment confirmed under a paid order's id that the order does not own
// (the bank made it, a buyer reused a link) is stray money: recorded once
// with the bank's amount, refunded in full, followed up until the bank
// reports it refunded; the order's own payment is never touched.
func TestLive_StrayPaymentIsRecordedRefundedOnceAndSettled(t *testing.T) {
	opts := quick
	opts.refundCheck = 500 * time.Millisecond
	s := newLiveStack(t, opts)
	id, own, _ := s.paid("e2e-stray", 1)
	bank := &tbank.Client{BaseURL: s.simURL, TerminalKey: s.terminal, Password: s.password}
	ctx := context.Background()
	notifyURL := strings.TrimSuffix(s.api, "/v1") + "/v1/payment-notifications/tbank"
	a, err := bank.Init(ctx, tbank.InitRequest{Amount: 777, OrderId: id, NotificationURL: notifyURL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.sim.Settle(id, tbanksim.Pay); err != nil { // the newest payment of the order: the stray one
		t.Fatal(err)
	}
	var got []ticketing.StrayPayment
	testenv.WaitFor(t, 10*time.Second, "the stray payment refunded and settled", func() bool {
		got, err = s.app.Store.Payments.OrderStrays(ctx, id)
		return err == nil && len(got) == 1 && got[0].Status == ticketing.StrayRefunded
	})
	if p := got[0]; p.PaymentID != string(a.PaymentId) || p.Amount != 777 || p.RefundedAt == nil {
		t.Errorf("stray record %+v: want payment %s of 777, refunded", p, a.PaymentId)
	}
	for _, p := range s.sim.Payments(id) {
		switch p.ID {
		case own:
			if p.Status != tbank.StatusConfirmed || p.Refunded != 0 {
				t.Errorf("the order's own payment %+v: want CONFIRMED, untouched", p)
			}
		case string(a.PaymentId):
			if p.Status != tbank.StatusRefunded || p.Refunded != 777 {
				t.Errorf("the stray payment %+v: want REFUNDED in full, once", p)
			}
		}
	}
	if st := s.status(id); st != "paid" {
		t.Errorf("order %s, want still paid", st)
	}
}
