package tbanksim_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
)

var ctx = context.Background()

// start makes a payment with a shown QR, notifications to the receiver.
func (f *fixture) start(t *testing.T, order string, amount int64, due time.Time) string {
	t.Helper()
	a, err := f.client.Init(ctx, tbank.InitRequest{Amount: amount, OrderId: order,
		NotificationURL: f.receiver.URL, RedirectDueDate: tbank.DueDate(due)})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if _, err := f.client.GetQr(ctx, string(a.PaymentId)); err != nil {
		t.Fatalf("GetQr: %v", err)
	}
	return string(a.PaymentId)
}

func (f *fixture) pay(t *testing.T, order string) {
	t.Helper()
	if _, err := f.sim.Settle(order, tbanksim.Pay); err != nil {
		t.Fatalf("pay %s: %v", order, err)
	}
}

func statuses(bodies [][]byte) string {
	var out []string
	for _, b := range bodies {
		for _, s := range []string{"CONFIRMED", "REFUNDED", "REJECTED", "DEADLINE_EXPIRED", "CANCELED"} {
			if strings.Contains(string(b), `"Status":"`+s+`"`) {
				out = append(out, s)
			}
		}
	}
	return strings.Join(out, ",")
}

// eventually waits for cond, failing after 5s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestNotifications_RetriedUntilTheReceiverAnswersOK(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	f.receiver.Refuse = 2
	f.start(t, "ord-retry", 1000, time.Now().Add(time.Hour))
	f.pay(t, "ord-retry")
	f.receiver.Wait(t, "ord-retry", "CONFIRMED", 5*time.Second)
	eventually(t, "delivery", func() bool {
		d := f.sim.Deliveries()
		return len(d) == 1 && d[0].Delivered
	})
	if d := f.sim.Deliveries()[0]; d.Attempts != 3 {
		t.Errorf("attempts = %d, want 3 (two refused, then OK)", d.Attempts)
	}
}

func TestNotifications_AnAnswerOtherThanOKIsNotAnAcknowledgement(t *testing.T) {
	var mu sync.Mutex
	answers := []string{"ok", "OK\n", "<html>OK</html>", "OK"}
	got := 0
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write([]byte(answers[min(got, len(answers)-1)]))
		got++
	})
	f := newFixture(t, tbanksim.Options{})
	a, err := f.client.Init(ctx, tbank.InitRequest{Amount: 1000, OrderId: "ord-ok", NotificationURL: srv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.GetQr(ctx, string(a.PaymentId)); err != nil {
		t.Fatal(err)
	}
	f.pay(t, "ord-ok")
	eventually(t, "delivery", func() bool { return f.sim.Deliveries()[0].Delivered })
	if d := f.sim.Deliveries()[0]; d.Attempts != 4 {
		t.Errorf("attempts = %d, want 4: only the exact body OK acknowledges", d.Attempts)
	}
}

func TestFaults_DuplicateDeliversEveryNotificationTwice(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	f.sim.SetFaults(tbanksim.Faults{Duplicate: true})
	f.start(t, "ord-dup", 1000, time.Now().Add(time.Hour))
	f.pay(t, "ord-dup")
	eventually(t, "two notifications", func() bool { return len(f.receiver.Bodies("ord-dup")) == 2 })
	b := f.receiver.Bodies("ord-dup")
	if string(b[0]) != string(b[1]) {
		t.Errorf("duplicates differ:\n%s\n%s", b[0], b[1])
	}
}

func TestFaults_OutOfOrderDeliversTheStaleStateLast(t *testing.T) {
	f := newFixture(t, tbanksim.Options{HoldFor: time.Minute})
	f.sim.SetFaults(tbanksim.Faults{OutOfOrder: true})
	id := f.start(t, "ord-ooo", 1000, time.Now().Add(time.Hour))
	f.pay(t, "ord-ooo")
	if _, err := f.client.Cancel(ctx, tbank.CancelRequest{PaymentId: id}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both notifications", func() bool { return len(f.receiver.Bodies("ord-ooo")) == 2 })
	if got := statuses(f.receiver.Bodies("ord-ooo")); got != "REFUNDED,CONFIRMED" {
		t.Errorf("arrival order %s, want REFUNDED,CONFIRMED", got)
	}
}

func TestFaults_OutOfOrderReleasesALoneNotificationAfterHoldFor(t *testing.T) {
	f := newFixture(t, tbanksim.Options{HoldFor: 50 * time.Millisecond})
	f.sim.SetFaults(tbanksim.Faults{OutOfOrder: true})
	f.start(t, "ord-hold", 1000, time.Now().Add(time.Hour))
	f.pay(t, "ord-hold")
	f.receiver.Wait(t, "ord-hold", "CONFIRMED", 5*time.Second)
}

func TestFaults_DelayHoldsTheFirstAttempt(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	f.sim.SetFaults(tbanksim.Faults{DelayMS: 300})
	f.start(t, "ord-late", 1000, time.Now().Add(time.Hour))
	paid := time.Now()
	f.pay(t, "ord-late")
	f.receiver.Wait(t, "ord-late", "CONFIRMED", 5*time.Second)
	if waited := time.Since(paid); waited < 300*time.Millisecond {
		t.Errorf("notification arrived after %v, want at least the 300ms delay", waited)
	}
}

func TestFaults_LostNotificationsComeBackOnResend(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	f.sim.SetFaults(tbanksim.Faults{Lose: true})
	f.start(t, "ord-lost", 1000, time.Now().Add(time.Hour))
	f.pay(t, "ord-lost")
	if d := f.sim.Deliveries(); len(d) != 1 || !d[0].Lost || d[0].Attempts != 0 {
		t.Fatalf("deliveries %+v, want one lost and never attempted", d)
	}
	f.sim.SetFaults(tbanksim.Faults{})
	a, err := f.client.Resend(ctx)
	if err != nil || a.Count != 1 {
		t.Fatalf("Resend = %+v, %v; want Count 1", a, err)
	}
	f.receiver.Wait(t, "ord-lost", "CONFIRMED", 5*time.Second)
	if a, _ := f.client.Resend(ctx); a.Count != 0 {
		t.Errorf("second Resend Count = %d, want 0", a.Count)
	}
}

// clock is a settable clock for deadline tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestDeadline_PayingLateExpiresUnlessConfirmAfterDeadline(t *testing.T) {
	clk := &clock{now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	f := newFixture(t, tbanksim.Options{Now: clk.Now})
	id := f.start(t, "ord-expired", 1000, clk.Now().Add(10*time.Minute))
	clk.Add(11 * time.Minute)
	if _, err := f.sim.Settle("ord-expired", tbanksim.Pay); err == nil {
		t.Fatal("paying after the deadline succeeded without the fault")
	}
	if st, _ := f.client.GetState(ctx, id); st.Status != tbank.StatusDeadlineExpired {
		t.Fatalf("status %s, want DEADLINE_EXPIRED", st.Status)
	}
	f.receiver.Wait(t, "ord-expired", "DEADLINE_EXPIRED", 5*time.Second)

	f.sim.SetFaults(tbanksim.Faults{ConfirmAfterDeadline: true})
	if _, err := f.sim.Settle("ord-expired", tbanksim.Pay); err != nil {
		t.Fatalf("late pay with ConfirmAfterDeadline: %v", err)
	}
	if st, _ := f.client.GetState(ctx, id); st.Status != tbank.StatusConfirmed {
		t.Errorf("status %s, want CONFIRMED after the deadline", st.Status)
	}
	f.receiver.Wait(t, "ord-expired", "CONFIRMED", 5*time.Second)
}

func TestFaults_Init5xxCreatesNothing(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	f.sim.SetFaults(tbanksim.Faults{InitFailures: 1})
	_, err := f.client.Init(ctx, tbank.InitRequest{Amount: 1000, OrderId: "ord-5xx"})
	if !tbank.IsTransport(err) {
		t.Fatalf("Init err = %v, want ErrTransport", err)
	}
	if got := f.sim.Payments("ord-5xx"); len(got) != 0 {
		t.Errorf("a 503 Init created %+v", got)
	}
	if _, err := f.client.Init(ctx, tbank.InitRequest{Amount: 1000, OrderId: "ord-5xx"}); err != nil {
		t.Errorf("next Init: %v", err)
	}
}

func TestFaults_InitTimeoutThenStartPaymentChargesOnce(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	f.sim.SetFaults(tbanksim.Faults{InitTimeouts: 1, InitHangMS: 2000})
	impatient := *f.client
	impatient.HTTP = &http.Client{Timeout: 100 * time.Millisecond}
	req := tbank.InitRequest{Amount: 1000, OrderId: "ord-timeout"}
	if _, _, err := impatient.StartPayment(ctx, req); !tbank.IsTransport(err) {
		t.Fatalf("first attempt err = %v, want ErrTransport (timed out)", err)
	}
	id, started, err := f.client.StartPayment(ctx, req)
	if err != nil || started {
		t.Fatalf("retry = %s, started %v, %v; want the payment the timed-out Init made", id, started, err)
	}
	if got := f.sim.Payments("ord-timeout"); len(got) != 1 || got[0].ID != id {
		t.Errorf("payments %+v, want exactly %s", got, id)
	}
}

func TestAuth_UnknownTerminalAndNonDemoSbpPayTestAreRefused(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	stranger := *f.client
	stranger.TerminalKey = "NoSuchTerminal"
	if _, err := stranger.GetState(ctx, "1"); !tbank.IsCode(err, tbank.CodeTerminalNotFound) {
		t.Errorf("unknown terminal: err = %v, want %s", err, tbank.CodeTerminalNotFound)
	}
	f.sim.AddTerminal("TixLive", "pw")
	live := tbank.Client{BaseURL: f.client.BaseURL, TerminalKey: "TixLive", Password: "pw"}
	a, err := live.Init(ctx, tbank.InitRequest{Amount: 1000, OrderId: "ord-live"})
	if err != nil {
		t.Fatal(err)
	}
	var refusal *tbank.Error
	if err := live.SbpPayTest(ctx, tbank.SbpPayTestRequest{PaymentId: string(a.PaymentId)}); !errors.As(err, &refusal) {
		t.Errorf("SbpPayTest on a non-DEMO terminal: err = %v, want a refusal", err)
	}
}

func TestCancel_PartialRefundEndsPartialRefunded(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	id := f.start(t, "ord-part", 3000, time.Now().Add(time.Hour))
	f.pay(t, "ord-part")
	a, err := f.client.Cancel(ctx, tbank.CancelRequest{PaymentId: id, Amount: 1000})
	if err != nil || a.NewAmount != 2000 {
		t.Fatalf("Cancel = %+v, %v; want 2000 left", a, err)
	}
	f.receiver.Wait(t, "ord-part", "PARTIAL_REFUNDED", 5*time.Second)
	if _, err := f.client.Cancel(ctx, tbank.CancelRequest{PaymentId: id, Amount: 2001}); err == nil {
		t.Error("refunding more than is left succeeded")
	}
	if _, err := f.client.GetQr(ctx, id); err == nil {
		t.Error("GetQr on a paid payment succeeded")
	}
}

func TestDeadline_AnUnpaidPaymentExpiresOnItsOwn(t *testing.T) {
	clk := &clock{now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	f := newFixture(t, tbanksim.Options{Now: clk.Now, Sweep: 10 * time.Millisecond})
	f.start(t, "ord-sweep", 1000, clk.Now().Add(10*time.Minute))
	clk.Add(11 * time.Minute)
	f.receiver.Wait(t, "ord-sweep", "DEADLINE_EXPIRED", 5*time.Second)
	if got := f.sim.Payments("ord-sweep"); got[0].Status != tbank.StatusDeadlineExpired {
		t.Errorf("status %s, want DEADLINE_EXPIRED", got[0].Status)
	}
}
