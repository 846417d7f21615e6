package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/config"
	"tix/internal/demo"
	"tix/internal/payment"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// restoreDefaults undoes deriveDefaults when the test ends.
func restoreDefaults(t *testing.T) {
	saved := map[string]string{}
	for k, v := range localDefaults {
		saved[k] = v
	}
	t.Cleanup(func() { localDefaults = saved })
}

// The bank is the simulator on TIX_ACQUIRER_SIM_ADDR and its notifications
// come to TIX_ADDR, unless the environment says otherwise; another bank
// starts no simulator.
func TestSimulatorDefaults(t *testing.T) {
	restoreDefaults(t)
	t.Setenv("TIX_ADDR", "127.0.0.1:18080")
	t.Setenv("TIX_ACQUIRER_SIM_ADDR", "127.0.0.1:18089")
	deriveDefaults()
	if got := getenv("TIX_TBANK_API_URL"); got != "http://127.0.0.1:18089" {
		t.Errorf("TIX_TBANK_API_URL = %q", got)
	}
	if got := getenv("TIX_PUBLIC_URL"); got != "http://127.0.0.1:18080" {
		t.Errorf("TIX_PUBLIC_URL = %q", got)
	}
	if got := getenv("TIX_ACQUIRER_SIM_REFUND_AFTER"); got != "2s" {
		t.Errorf("TIX_ACQUIRER_SIM_REFUND_AFTER = %q", got)
	}
	t.Setenv("TIX_TBANK_API_URL", "https://securepay.tinkoff.ru")
	if s, err := startSimulator(getenv("TIX_TBANK_API_URL")); s != nil || err != nil {
		t.Errorf("another bank: simulator %v, %v; want none", s, err)
	}
	t.Setenv("TIX_ACQUIRER_SIM_REFUND_AFTER", "soon")
	if _, err := startSimulator("http://127.0.0.1:18089"); err == nil || !strings.Contains(err.Error(), "TIX_ACQUIRER_SIM_REFUND_AFTER") {
		t.Errorf("bad refund delay: %v", err)
	}
}

// The demo organizer is connected with a checked, sealed password; a restart
// keeps the receipt settings an operator changed; a password the simulator
// refuses stops the start.
func TestConnectDemo(t *testing.T) {
	restoreDefaults(t)
	t.Setenv("TIX_ACQUIRER_SIM_ADDR", freeAddr(t))
	deriveDefaults()
	sim, err := startSimulator(getenv("TIX_TBANK_API_URL"))
	if err != nil || sim == nil {
		t.Fatalf("simulator %v, %v", sim, err)
	}
	t.Cleanup(func() { sim.stop(context.Background()) })
	ctx := context.Background()
	st := testenv.Store(t, nil)
	if err := st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: demo.OrganizerID, Name: "Demo", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	box, err := webhook.NewAESBox(config.LocalKeyring)
	if err != nil {
		t.Fatal(err)
	}
	a := &app.App{Store: st, Payments: &app.Payments{Box: box}}
	if err := connectDemo(ctx, a, sim); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Payments.SetReceiptSettings(ctx, demo.OrganizerID, "usn_income", "vat20"); err != nil {
		t.Fatal(err)
	}
	if err := connectDemo(ctx, a, sim); err != nil {
		t.Fatal(err)
	}
	acct, err := st.Payments.GetPaymentAccount(ctx, demo.OrganizerID)
	if err != nil || acct.TerminalKey != demoTerminalKey || acct.Taxation != "usn_income" || acct.VAT != "vat20" {
		t.Fatalf("account %+v, %v", acct, err)
	}
	if pw, err := box.Open(acct.SealedPassword, payment.PasswordAAD(acct)); err != nil || pw != "tix-sim-password" {
		t.Errorf("sealed password opens to %q, %v", pw, err)
	}
	if o, _ := st.Organizers.GetOrganizer(ctx, demo.OrganizerID); !o.Verified {
		t.Error("the demo organizer is not verified")
	}
	t.Setenv("TIX_SIM_TERMINAL_PASSWORD", "not-the-simulator's")
	if err := connectDemo(ctx, a, sim); err == nil || !strings.Contains(err.Error(), "204") {
		t.Errorf("a password the simulator refuses: %v", err)
	}
}
