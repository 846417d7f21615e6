package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
	"tix/internal/testenv"
)

var quick = liveOptions{orderTTL: 15 * time.Minute, checkGrace: time.Minute, refundCheck: time.Minute, bankTimeout: 2 * time.Second, capacity: 10}

// A live order is paid at the (simulated) bank, the bank's notification makes
// it paid with tickets and a live order.paid; its refund goes through
// ASYNC_REFUNDING to REFUNDED, and the order ends refunded with
// order.refunded. The bank's notifications arrive twice, out of order and
// with a root field tix has never seen, and change nothing twice.
func TestLive_PaidAndRefundedThroughTheBankEndToEnd(t *testing.T) {
	s := newLiveStack(t, quick)
	s.sim.SetFaults(tbanksim.Faults{Duplicate: true, OutOfOrder: true, ExtraField: true})
	code, o := s.order("e2e-paid", 2)
	if code != http.StatusCreated {
		t.Fatalf("POST /orders with sk_live: %d %v", code, o)
	}
	id := o["id"].(string)
	pay, _ := o["payment"].(map[string]any)
	payload, _ := pay["qr_payload"].(string)
	if !strings.HasPrefix(payload, "https://qr.nspk.ru/") || !strings.HasPrefix(pay["qr_image"].(string), "data:image/png;base64,") {
		t.Fatalf("payment %v: want the bank's NSPK link and its PNG", pay)
	}
	bank := s.sim.Payments(id)
	if len(bank) != 1 || bank[0].Amount != 300000 || !bank[0].Receipt || bank[0].QR != payload {
		t.Fatalf("bank payments %+v: want one of 300000 kopecks with a receipt and this QR", bank)
	}
	if _, err := s.sim.Settle(id, tbanksim.Pay); err != nil {
		t.Fatal(err)
	}
	s.waitStatus(id, "paid", 10*time.Second)
	if code, tk := s.call("GET", "/orders/"+id+"/tickets", ""); code != http.StatusOK || len(tk["tickets"].([]any)) != 2 {
		t.Fatalf("tickets: %d %v", code, tk)
	}
	if evs := s.waitEvents("order.paid", id, 1); len(evs) != 1 || !evs[0].Order.Livemode || evs[0].Environment != "live" {
		t.Errorf("order.paid events %+v: want one, livemode true", evs)
	}

	if code, r := s.call("POST", "/orders/"+id+"/refund", ""); code != http.StatusOK || r["status"] != "pending" {
		t.Fatalf("refund: %d %v", code, r)
	}
	testenv.WaitFor(t, 5*time.Second, "the bank refunding", func() bool {
		st := s.sim.Payments(id)[0].Status
		return st == tbank.StatusAsyncRefunding || st == tbank.StatusRefunded
	})
	s.waitStatus(id, "refunded", 10*time.Second)
	if code, r := s.call("GET", "/orders/"+id+"/refund", ""); code != http.StatusOK || r["status"] != "completed" {
		t.Fatalf("refund after REFUNDED: %d %v", code, r)
	}
	if evs := s.waitEvents("order.refunded", id, 1); len(evs) != 1 || !evs[0].Order.Livemode {
		t.Errorf("order.refunded events %+v: want one, livemode true", evs)
	}
	time.Sleep(500 * time.Millisecond) // the duplicates' and stale states' time to arrive, if they were to change anything
	if n := len(s.hooks.events(t, "order.paid", id)); n != 1 {
		t.Errorf("%d order.paid webhooks, want 1 (duplicate notifications must not pay twice)", n)
	}
	if st := s.status(id); st != "refunded" {
		t.Errorf("after every notification arrived the order is %s, want refunded (a stale state must not move it back)", st)
	}
}

// The bank's notification is lost: the expiry timer asks the bank (GetState)
// and the order is paid, not cancelled.
func TestLive_LostNotificationIsRecoveredByReconciliation(t *testing.T) {
	opts := quick
	opts.orderTTL = 2 * time.Second
	s := newLiveStack(t, opts)
	s.sim.SetFaults(tbanksim.Faults{Lose: true})
	_, o := s.order("e2e-lost", 1)
	id := o["id"].(string)
	if _, err := s.sim.Settle(id, tbanksim.Pay); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if st := s.status(id); st != "pending" {
		t.Fatalf("with the notification lost the order is %s, want still pending", st)
	}
	s.waitStatus(id, "paid", 15*time.Second)
	if n := len(s.waitEvents("order.paid", id, 1)); n != 1 {
		t.Errorf("%d order.paid events, want 1", n)
	}
}

// A forged notification (wrong token, unknown terminal, no token) is a 403
// and changes nothing. A signed one is only a hint: claiming CONFIRMED while
// the bank has the payment unpaid pays nothing; once the bank has it paid
// (its own notification lost), the same body makes tix look and pay.
func TestLive_ForgedNotificationChangesNothing(t *testing.T) {
	s := newLiveStack(t, quick)
	s.sim.SetFaults(tbanksim.Faults{Lose: true})
	_, o := s.order("e2e-forged", 1)
	id := o["id"].(string)
	pid := s.sim.Payments(id)[0].ID
	body := `{"TerminalKey":"` + s.terminal + `","OrderId":"` + id + `","Success":true,"Status":"CONFIRMED","PaymentId":` + pid + `,"ErrorCode":"0","Amount":150000}`
	forged, err := tbank.SignNotification([]byte(body), "not-the-password")
	if err != nil {
		t.Fatal(err)
	}
	unknown, _ := tbank.SignNotification([]byte(strings.Replace(body, s.terminal, "SomeoneElse", 1)), s.password)
	for name, b := range map[string]string{"wrong token": string(forged), "unknown terminal": string(unknown), "no token": body} {
		if code, text := s.notify(b); code != http.StatusForbidden || text == "OK" {
			t.Errorf("%s: %d %q, want 403", name, code, text)
		}
	}
	if st := s.status(id); st != "pending" {
		t.Fatalf("after forged notifications the order is %s, want pending", st)
	}
	genuine, _ := tbank.SignNotification([]byte(body), s.password)
	if code, text := s.notify(string(genuine)); code != http.StatusOK || text != "OK" {
		t.Fatalf("signed notification before the payment: %d %q, want 200 OK", code, text)
	}
	if st := s.status(id); st != "pending" {
		t.Fatalf("a signed CONFIRMED the bank does not confirm made the order %s, want pending (the bank is asked)", st)
	}
	if _, err := s.sim.Settle(id, tbanksim.Pay); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if code, text := s.notify(string(genuine)); code != http.StatusOK || text != "OK" {
			t.Fatalf("genuine notification: %d %q, want 200 OK", code, text)
		}
	}
	if st := s.status(id); st != "paid" {
		t.Fatalf("after the genuine notification the order is %s, want paid", st)
	}
}

// notify posts a notification body as the bank would.
func (s *liveStack) notify(body string) (int, string) {
	s.t.Helper()
	res, err := http.Post(strings.TrimSuffix(s.api, "/v1")+"/v1/payment-notifications/tbank", "application/json", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Init times out (the bank made the payment but answered too late): 502, and
// the retry with the same Idempotency-Key finds that payment: one charge.
func TestLive_InitTimeoutThenRetryChargesOnce(t *testing.T) {
	opts := quick
	opts.bankTimeout = 300 * time.Millisecond
	s := newLiveStack(t, opts)
	s.sim.SetFaults(tbanksim.Faults{InitTimeouts: 1, InitHangMS: 1500})
	code, o := s.order("e2e-timeout", 1)
	if code != http.StatusBadGateway || o["error"].(map[string]any)["code"] != "payment_provider_error" {
		t.Fatalf("first attempt: %d %v, want 502 payment_provider_error", code, o)
	}
	code, o = s.order("e2e-timeout", 1)
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("retry: %d %v", code, o)
	}
	id := o["id"].(string)
	bank := s.sim.Payments(id)
	if len(bank) != 1 || o["payment"].(map[string]any)["qr_payload"] != bank[0].QR {
		t.Fatalf("bank payments %+v after the retry, want the one the timed-out Init made", bank)
	}
}
