package payment_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tix/internal/payment"
	"tix/internal/payment/paymenttest"
	"tix/internal/payment/tbank"
	"tix/internal/payment/tbank/tbanktest"
	"tix/internal/payment/tbanksim"
	"tix/internal/ticketing"
)

// liveFixture is the live provider on a simulated DEMO terminal.
type liveFixture struct {
	sim      *tbanksim.Server
	live     *payment.Live
	receiver *tbanktest.Receiver
}

func newLive(t *testing.T) *liveFixture {
	t.Helper()
	sim := tbanksim.New(tbanksim.Options{NotifyRetry: 20 * time.Millisecond, RefundAfter: 50 * time.Millisecond})
	sim.AddTerminal("TixLiveDEMO", "live-pw")
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	rcv := tbanktest.NewReceiver(t)
	return &liveFixture{sim: sim, receiver: rcv, live: &payment.Live{
		Client:          &tbank.Client{BaseURL: srv.URL, TerminalKey: "TixLiveDEMO", Password: "live-pw"},
		NotificationURL: rcv.URL,
	}}
}

func liveRequest(order string, amount int64, expires time.Time) ticketing.PaymentRequest {
	return ticketing.PaymentRequest{OrderID: order, Environment: ticketing.EnvLive, Amount: amount,
		Currency: "RUB", Description: "Order " + order, ExpiresAt: expires}
}

func TestLive_MeetsTheProviderContract(t *testing.T) {
	paymenttest.ProviderContract(t, newLive(t).live)
}

func TestLive_PaymentIsTheBanksWithTheOrdersExpiryAsItsDeadline(t *testing.T) {
	f := newLive(t)
	expires := time.Now().Add(15 * time.Minute).Truncate(time.Second)
	pay, err := f.live.CreatePayment(context.Background(), liveRequest("ord-live-1", 250000, expires))
	if err != nil {
		t.Fatal(err)
	}
	got := f.sim.Payments("ord-live-1")
	if len(got) != 1 || got[0].ID != pay.ID || got[0].Status != tbank.StatusFormShowed || got[0].QR != pay.Payload {
		t.Fatalf("bank payments %+v, want one FORM_SHOWED payment %s with payload %s", got, pay.ID, pay.Payload)
	}
	if !got[0].Due.Equal(expires) {
		t.Errorf("RedirectDueDate %v, want the order's expiry %v", got[0].Due, expires)
	}
	if got[0].NotificationURL != f.receiver.URL {
		t.Errorf("NotificationURL %q, want %q", got[0].NotificationURL, f.receiver.URL)
	}
}

func TestLive_InitTimeoutThenRetryChargesOnce(t *testing.T) {
	f := newLive(t)
	f.sim.SetFaults(tbanksim.Faults{InitTimeouts: 1, InitHangMS: 1000})
	f.live.Timeout = 100 * time.Millisecond
	req := liveRequest("ord-live-timeout", 1000, time.Now().Add(time.Hour))
	_, err := f.live.CreatePayment(context.Background(), req)
	if !tbank.IsTransport(err) {
		t.Fatalf("first attempt: err = %v, want the unknown outcome of a timeout", err)
	}
	f.live.Timeout = 0
	pay, err := f.live.CreatePayment(context.Background(), req)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := f.sim.Payments("ord-live-timeout"); len(got) != 1 || got[0].ID != pay.ID {
		t.Errorf("bank payments %+v, want only %s: one charge", got, pay.ID)
	}
}

func TestLive_AcquirerFailuresAreErrors(t *testing.T) {
	f := newLive(t)
	f.sim.SetFaults(tbanksim.Faults{InitFailures: 1})
	if _, err := f.live.CreatePayment(context.Background(), liveRequest("ord-live-503", 1000, time.Now().Add(time.Hour))); !tbank.IsTransport(err) {
		t.Errorf("503 on Init: err = %v, want ErrTransport wrapped", err)
	}
	f.live.Client.Password = "wrong"
	_, err := f.live.CreatePayment(context.Background(), liveRequest("ord-live-forged", 1000, time.Now().Add(time.Hour)))
	if !tbank.IsCode(err, tbank.CodeBadToken) {
		t.Errorf("wrong terminal password: err = %v, want the bank's %s", err, tbank.CodeBadToken)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Close()
	f.live.Client.BaseURL = srv.URL
	if _, err := f.live.CreatePayment(context.Background(), liveRequest("ord-live-down", 1000, time.Now().Add(time.Hour))); !tbank.IsTransport(err) {
		t.Errorf("bank unreachable: err = %v, want ErrTransport", err)
	}
	if _, err := f.live.CreatePayment(context.Background(), liveRequest("ord", 1000, time.Time{})); !errors.Is(err, payment.ErrInvalidRequest) {
		t.Errorf("no expiry: err = %v, want ErrInvalidRequest", err)
	}
}

func TestLive_RefundGoesThroughAsyncRefundingToRefunded(t *testing.T) {
	f := newLive(t)
	ctx := context.Background()
	pay, err := f.live.CreatePayment(ctx, liveRequest("ord-live-refund", 5000, time.Now().Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.sim.Settle("ord-live-refund", tbanksim.Pay); err != nil {
		t.Fatal(err)
	}
	r := ticketing.RefundRequest{OrderID: "ord-live-refund", RefundID: "ref-1", PaymentID: pay.ID,
		Environment: ticketing.EnvLive, Amount: 5000, Currency: "RUB"}
	acc, err := f.live.Refund(ctx, r)
	if err != nil || acc.SettleAfter != 0 {
		t.Fatalf("Refund = %+v, %v; want accepted, settled by callback", acc, err)
	}
	if got := f.sim.Payments("ord-live-refund")[0]; got.Status != tbank.StatusAsyncRefunding {
		t.Errorf("bank status %s, want ASYNC_REFUNDING", got.Status)
	}
	if _, err := f.live.Refund(ctx, r); err != nil {
		t.Errorf("repeated refund: %v", err)
	}
	body := f.receiver.Wait(t, "ord-live-refund", tbank.StatusRefunded, 5*time.Second)
	if n, err := tbank.ParseNotification(body, "live-pw"); err != nil || string(n.PaymentId) != pay.ID {
		t.Errorf("REFUNDED notification %s: %+v, %v", body, n, err)
	}
	if got := f.sim.Payments("ord-live-refund")[0]; got.Refunded != 5000 {
		t.Errorf("refunded %d, want 5000 once", got.Refunded)
	}
}

func TestLive_LongDescriptionIsCutToTheBanksLimit(t *testing.T) {
	f := newLive(t)
	req := liveRequest("ord-live-desc", 1000, time.Now().Add(time.Hour))
	req.Description = strings.Repeat("Концерт ", 40)
	if _, err := f.live.CreatePayment(context.Background(), req); err != nil {
		t.Errorf("long description: %v", err)
	}
}

// A payment partly refunded at the bank (in its portal) is never voided by a
// refund tix asks for: Refund refuses, and nothing more goes back. Nor is a
// refund for another amount than the payment's sent: no partial Cancel.
func TestLive_RefundNeverVoidsAPartlyRefundedPaymentNorSendsAPartialCancel(t *testing.T) {
	f := newLive(t)
	ctx := context.Background()
	pay, err := f.live.CreatePayment(ctx, liveRequest("ord-live-part", 5000, time.Now().Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.sim.Settle("ord-live-part", tbanksim.Pay); err != nil {
		t.Fatal(err)
	}
	r := ticketing.RefundRequest{OrderID: "ord-live-part", RefundID: "ref-p", PaymentID: pay.ID, Environment: ticketing.EnvLive, Amount: 2000, Currency: "RUB"}
	if _, err := f.live.Refund(ctx, r); err == nil {
		t.Errorf("refund of 2000 of a 5000 payment accepted: a partial Cancel must never be sent")
	}
	if got := f.sim.Payments("ord-live-part")[0]; got.Refunded != 0 {
		t.Fatalf("after a refused refund the bank returned %d", got.Refunded)
	}
	if _, err := f.sim.RefundInPortal(pay.ID, 1000); err != nil {
		t.Fatal(err)
	}
	f.receiver.Wait(t, "ord-live-part", tbank.StatusPartialRefunded, 5*time.Second)
	r.Amount = 5000
	if _, err := f.live.Refund(ctx, r); err == nil {
		t.Errorf("refund of a PARTIAL_REFUNDED payment accepted, want it left to the operator")
	}
	if got := f.sim.Payments("ord-live-part")[0]; got.Refunded != 1000 || got.Status != tbank.StatusPartialRefunded {
		t.Errorf("bank payment %+v: want PARTIAL_REFUNDED with 1000 returned, nothing more", got)
	}
	if st, err := f.live.PaymentState(ctx, pay.ID); err != nil || st.Status != ticketing.PaymentPartlyRefunded {
		t.Errorf("PaymentState = %+v, %v; want partly refunded", st, err)
	}
	if _, err := f.live.PaymentState(ctx, "123"); !errors.Is(err, ticketing.ErrUnknownPayment) {
		t.Errorf("state of an unknown payment: %v, want ErrUnknownPayment", err)
	}
}
