// Package tbanktest holds the contract a T-Bank Internet Acquiring endpoint
// meets as tix uses it, so that the simulator and the bank's DEMO terminal
// run the same checks against the same client.
package tbanktest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/payment/tbank"
)

// Env is what the contract runs against.
type Env struct {
	// Client is a DEMO terminal's client (SbpPayTest forces outcomes).
	Client *tbank.Client
	// Receiver gets the terminal's notifications.
	Receiver *Receiver
	// Wait bounds every asynchronous change (state, refund, notification).
	Wait time.Duration
	// ExtraField, if set, switches on notifications with a root field tix has
	// never seen (the simulator can; the bank adds fields on its own schedule).
	ExtraField func(on bool)
}

var seq atomic.Int64

// orderID is unique per run so the contract can run against a shared DEMO terminal.
func orderID(kind string) string {
	return fmt.Sprintf("tix-contract-%s-%d-%d", kind, time.Now().UnixNano(), seq.Add(1))
}

// Contract checks env against the acquirer's contract.
func Contract(t *testing.T, env Env) {
	t.Helper()
	c := &contract{env: env, ctx: context.Background()}
	t.Run("Init then GetQr gives a qr.nspk.ru payload", c.initAndQR)
	t.Run("GetState tracks paid, rejected and expired payments", c.states)
	t.Run("Cancel of a paid payment refunds asynchronously", c.refund)
	t.Run("Cancel of an unpaid payment cancels it", c.cancelUnpaid)
	t.Run("a bad token is refused and creates nothing", c.badToken)
	t.Run("CheckOrder finds the payment an earlier attempt started", c.checkOrder)
	t.Run("notifications verify and a tampered one fails", c.notifications)
	if env.ExtraField != nil {
		t.Run("an unknown root field in a notification is covered by its token", c.extraField)
	}
}

type contract struct {
	env Env
	ctx context.Context
}

// start makes a payment with a shown QR for a fresh order.
func (c *contract) start(t *testing.T, kind string, amount int64) (order, paymentID, payload string) {
	t.Helper()
	order = orderID(kind)
	a, err := c.env.Client.Init(c.ctx, tbank.InitRequest{
		Amount: amount, OrderId: order, Description: "tix contract " + kind,
		NotificationURL: c.env.Receiver.URL, RedirectDueDate: tbank.DueDate(time.Now().Add(20 * time.Minute)),
	})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if a.Status != tbank.StatusNew || a.PaymentId == "" || a.OrderId != order || a.Amount != amount {
		t.Fatalf("Init answer %+v: want a NEW payment of order %s for %d", a, order, amount)
	}
	qr, err := c.env.Client.GetQr(c.ctx, string(a.PaymentId))
	if err != nil {
		t.Fatalf("GetQr: %v", err)
	}
	if qr.PaymentId != a.PaymentId {
		t.Errorf("GetQr PaymentId = %s, want %s", qr.PaymentId, a.PaymentId)
	}
	return order, string(a.PaymentId), qr.Data
}

// await polls GetState until the payment reaches want.
func (c *contract) await(t *testing.T, paymentID, want string) {
	t.Helper()
	deadline := time.Now().Add(c.env.Wait)
	for {
		st, err := c.env.Client.GetState(c.ctx, paymentID)
		if err != nil {
			t.Fatalf("GetState: %v", err)
		}
		if st.Status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("payment %s is %s after %v, want %s", paymentID, st.Status, c.env.Wait, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *contract) initAndQR(t *testing.T) {
	_, id, payload := c.start(t, "qr", 150050)
	u, err := url.Parse(payload)
	if err != nil || u.Scheme != "https" || u.Host != "qr.nspk.ru" || len(strings.Trim(u.Path, "/")) != 32 {
		t.Fatalf("payload %q: want https://qr.nspk.ru/<32-character id>?...", payload)
	}
	if q := u.Query(); q.Get("sum") != "150050" || q.Get("cur") != "RUB" || q.Get("type") != "02" {
		t.Errorf("payload %q: want type=02 (dynamic), sum=150050, cur=RUB", payload)
	}
	c.await(t, id, tbank.StatusFormShowed)
}

func (c *contract) states(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  tbank.SbpPayTestRequest
		want string
	}{
		{"paid", tbank.SbpPayTestRequest{}, tbank.StatusConfirmed},
		{"rejected", tbank.SbpPayTestRequest{IsRejected: true}, tbank.StatusRejected},
		{"expired", tbank.SbpPayTestRequest{IsDeadlineExpired: true}, tbank.StatusDeadlineExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, id, _ := c.start(t, "state-"+tc.name, 1000)
			tc.req.PaymentId = id
			if err := c.env.Client.SbpPayTest(c.ctx, tc.req); err != nil {
				t.Fatalf("SbpPayTest: %v", err)
			}
			c.await(t, id, tc.want)
		})
	}
}

func (c *contract) pay(t *testing.T, kind string, amount int64) (order, id string) {
	t.Helper()
	order, id, _ = c.start(t, kind, amount)
	if err := c.env.Client.SbpPayTest(c.ctx, tbank.SbpPayTestRequest{PaymentId: id}); err != nil {
		t.Fatalf("SbpPayTest: %v", err)
	}
	c.await(t, id, tbank.StatusConfirmed)
	return order, id
}

func (c *contract) refund(t *testing.T) {
	_, id := c.pay(t, "refund", 2500)
	a, err := c.env.Client.Cancel(c.ctx, tbank.CancelRequest{PaymentId: id})
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if a.Status != tbank.StatusAsyncRefunding || a.OriginalAmount != 2500 || a.NewAmount != 0 {
		t.Errorf("Cancel answer %+v: want ASYNC_REFUNDING of 2500, nothing left", a)
	}
	c.await(t, id, tbank.StatusRefunded)
}

func (c *contract) cancelUnpaid(t *testing.T) {
	_, id, _ := c.start(t, "cancel", 1000)
	a, err := c.env.Client.Cancel(c.ctx, tbank.CancelRequest{PaymentId: id})
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if a.Status != tbank.StatusCanceled {
		t.Errorf("Cancel answer status %s, want CANCELED", a.Status)
	}
	c.await(t, id, tbank.StatusCanceled)
}

func (c *contract) badToken(t *testing.T) {
	forger := *c.env.Client
	forger.Password = c.env.Client.Password + "-wrong"
	order := orderID("forged")
	_, err := forger.Init(c.ctx, tbank.InitRequest{Amount: 1000, OrderId: order})
	var refusal *tbank.Error
	if !errors.As(err, &refusal) || refusal.Code != tbank.CodeBadToken {
		t.Fatalf("Init with a wrong password: err = %v, want the bank's error %s", err, tbank.CodeBadToken)
	}
	found, err := c.env.Client.CheckOrder(c.ctx, order)
	if err != nil {
		t.Fatalf("CheckOrder: %v", err)
	}
	if len(found.Payments) != 0 {
		t.Errorf("the refused Init created payments: %+v", found.Payments)
	}
}

func (c *contract) checkOrder(t *testing.T) {
	order, id, _ := c.start(t, "check", 4200)
	found, err := c.env.Client.CheckOrder(c.ctx, order)
	if err != nil {
		t.Fatalf("CheckOrder: %v", err)
	}
	if len(found.Payments) != 1 || string(found.Payments[0].PaymentId) != id || found.Payments[0].Amount != 4200 {
		t.Fatalf("CheckOrder payments %+v, want the one payment %s of 4200", found.Payments, id)
	}
	again, started, err := c.env.Client.StartPayment(c.ctx, tbank.InitRequest{Amount: 4200, OrderId: order})
	if err != nil || started || again != id {
		t.Errorf("StartPayment for the same order = %s, started %v, %v; want the earlier %s, not started", again, started, err, id)
	}
	fresh := orderID("check-fresh")
	newID, started, err := c.env.Client.StartPayment(c.ctx, tbank.InitRequest{Amount: 4200, OrderId: fresh})
	if err != nil || !started || newID == "" || newID == id {
		t.Errorf("StartPayment for a new order = %s, started %v, %v; want a new payment", newID, started, err)
	}
}

func (c *contract) notifications(t *testing.T) {
	order, id := c.pay(t, "notify", 3100)
	body := c.env.Receiver.Wait(t, order, tbank.StatusConfirmed, c.env.Wait)
	n, err := tbank.ParseNotification(body, c.env.Client.Password)
	if err != nil {
		t.Fatalf("genuine notification refused: %v\n%s", err, body)
	}
	if n.TerminalKey != c.env.Client.TerminalKey || string(n.PaymentId) != id || n.Amount != 3100 || !bool(n.Success) {
		t.Errorf("notification %+v: want terminal %s, payment %s, 3100, Success", n, c.env.Client.TerminalKey, id)
	}
	if k, err := tbank.NotificationTerminal(body); err != nil || k != c.env.Client.TerminalKey {
		t.Errorf("NotificationTerminal = %q, %v", k, err)
	}
	forged := strings.Replace(string(body), `"CONFIRMED"`, `"REFUNDED"`, 1)
	if _, err := tbank.ParseNotification([]byte(forged), c.env.Client.Password); !errors.Is(err, tbank.ErrBadToken) {
		t.Errorf("tampered notification: err = %v, want ErrBadToken", err)
	}
	if _, err := tbank.ParseNotification(body, c.env.Client.Password+"x"); !errors.Is(err, tbank.ErrBadToken) {
		t.Errorf("notification under another password: err = %v, want ErrBadToken", err)
	}
}

func (c *contract) extraField(t *testing.T) {
	c.env.ExtraField(true)
	defer c.env.ExtraField(false)
	order, _ := c.pay(t, "extra", 1000)
	body := c.env.Receiver.Wait(t, order, tbank.StatusConfirmed, c.env.Wait)
	root := map[string]any{}
	if err := jsonUnmarshal(body, &root); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"TerminalKey": true, "OrderId": true, "Success": true, "Status": true,
		"PaymentId": true, "ErrorCode": true, "Amount": true, "Token": true}
	var extra string
	for k, v := range root {
		if _, object := v.(map[string]any); !known[k] && !object {
			extra = k
		}
	}
	if extra == "" {
		t.Fatalf("notification %s has no unknown root field", body)
	}
	if _, err := tbank.ParseNotification(body, c.env.Client.Password); err != nil {
		t.Fatalf("genuine notification with unknown field %s refused: %v", extra, err)
	}
	forged, err := replaceField(body, extra, "forged")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbank.ParseNotification(forged, c.env.Client.Password); !errors.Is(err, tbank.ErrBadToken) {
		t.Errorf("notification with %s changed: err = %v, want ErrBadToken (the field is signed)", extra, err)
	}
}
