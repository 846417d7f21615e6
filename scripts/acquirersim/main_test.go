package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
)

func TestRun_ServesTheBankAPIAndTheCommands(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "127.0.0.1:0", terminal{"TestDEMO", "pw"}, tbanksim.Options{}, func(a net.Addr) { addrs <- a })
	}()
	base := "http://" + (<-addrs).String()
	c := &tbank.Client{BaseURL: base, TerminalKey: "TestDEMO", Password: "pw"}
	a, err := c.Init(ctx, tbank.InitRequest{Amount: 1000, OrderId: "ord-main"})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	resp, err := http.Post(base+"/sim/pay", "application/json", strings.NewReader(`{"order_id":"ord-main"}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /sim/pay: %v %v", resp, err)
	}
	_ = resp.Body.Close()
	if st, err := c.GetState(ctx, string(a.PaymentId)); err != nil || st.Status != tbank.StatusConfirmed {
		t.Errorf("GetState = %+v, %v; want CONFIRMED", st, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
}

func TestTerminalFromEnv_ReadsThePasswordFile(t *testing.T) {
	f := t.TempDir() + "/pw"
	if err := writeFile(f, "from-file\n"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TIX_SIM_TERMINAL_PASSWORD_FILE", f)
	t.Setenv("TIX_SIM_TERMINAL_KEY", "FileDEMO")
	got, err := terminalFromEnv()
	if err != nil || got != (terminal{"FileDEMO", "from-file"}) {
		t.Errorf("terminalFromEnv = %+v, %v", got, err)
	}
}

func writeFile(name, s string) error { return os.WriteFile(name, []byte(s), 0o600) }

func TestCommand_PaysAndSwitchesFaultsOnARunningSimulator(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addrs := make(chan net.Addr, 1)
	go func() {
		_ = run(ctx, "127.0.0.1:0", terminal{"CmdDEMO", "pw"}, tbanksim.Options{}, func(a net.Addr) { addrs <- a })
	}()
	base := "http://" + (<-addrs).String()
	c := &tbank.Client{BaseURL: base, TerminalKey: "CmdDEMO", Password: "pw"}
	a, err := c.Init(ctx, tbank.InitRequest{Amount: 1000, OrderId: "ord-cmd"})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := command(ctx, base, []string{"pay", "ord-cmd"}, &out); err != nil || !strings.Contains(out.String(), `"status": "CONFIRMED"`) {
		t.Fatalf("pay: %v\n%s", err, out.String())
	}
	if st, _ := c.GetState(ctx, string(a.PaymentId)); st.Status != tbank.StatusConfirmed {
		t.Errorf("status %s after the pay command, want CONFIRMED", st.Status)
	}
	if err := command(ctx, base, []string{"pay", "ord-cmd"}, io.Discard); err == nil {
		t.Error("paying a paid order: no error")
	}
	if err := command(ctx, base, []string{"faults", `{"lose":true}`}, io.Discard); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := command(ctx, base, []string{"faults"}, &out); err != nil || !strings.Contains(out.String(), `"lose": true`) {
		t.Errorf("faults: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := command(ctx, base, []string{"payments", "ord-cmd"}, &out); err != nil || !strings.Contains(out.String(), string(a.PaymentId)) {
		t.Errorf("payments: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := command(ctx, base, []string{"refund", string(a.PaymentId), "400"}, &out); err != nil || !strings.Contains(out.String(), `"refunded": 400`) {
		t.Errorf("refund in the portal: %v\n%s", err, out.String())
	}
	if err := command(ctx, base, []string{"chargeback", "ord-cmd"}, io.Discard); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("unknown command: err = %v, want the usage", err)
	}
}

func TestRefundAfterFromEnv(t *testing.T) {
	t.Setenv("TIX_ACQUIRER_SIM_REFUND_AFTER", "")
	if d, err := refundAfterFromEnv(); d != 2*time.Second || err != nil {
		t.Errorf("default: %v, %v; want 2s", d, err)
	}
	t.Setenv("TIX_ACQUIRER_SIM_REFUND_AFTER", "300ms")
	if d, err := refundAfterFromEnv(); d != 300*time.Millisecond || err != nil {
		t.Errorf("300ms: %v, %v", d, err)
	}
	t.Setenv("TIX_ACQUIRER_SIM_REFUND_AFTER", "-1s")
	if _, err := refundAfterFromEnv(); err == nil || !strings.Contains(err.Error(), "TIX_ACQUIRER_SIM_REFUND_AFTER") {
		t.Errorf("-1s: %v; want an error naming the variable", err)
	}
}
