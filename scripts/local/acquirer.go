package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"tix/internal/app"
	"tix/internal/catalogimport"
	"tix/internal/demo"
	"tix/internal/payment"
	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
	"tix/internal/ticketing"
)

// The local stack's bank: the T-Bank simulator (internal/payment/tbanksim),
// served in this process on TIX_ACQUIRER_SIM_ADDR, with the demo organizer's
// terminal connected to it, so that live keys sell against it and no real
// money moves. Pointing TIX_TBANK_API_URL elsewhere turns it off.

// demoTerminalKey is the demo organizer's terminal at the simulator; its key
// ends in DEMO as the bank's test terminals' do.
const demoTerminalKey = "TixSimDEMO"

// simDefaults are the simulator's settings, read by the runner only (the
// service itself knows only TIX_TBANK_API_URL).
var simDefaults = map[string]string{
	"TIX_ACQUIRER_SIM_ADDR":         "127.0.0.1:8089",
	"TIX_ACQUIRER_SIM_REFUND_AFTER": "2s",
	"TIX_SIM_TERMINAL_PASSWORD":     "tix-sim-password",
}

func init() {
	for k, v := range simDefaults {
		localDefaults[k] = v
	}
}

// deriveDefaults sets the defaults that follow from other settings: the
// bank is the simulator, and the bank's notifications come to TIX_ADDR.
func deriveDefaults() {
	localDefaults["TIX_TBANK_API_URL"] = "http://" + getenv("TIX_ACQUIRER_SIM_ADDR")
	localDefaults["TIX_PUBLIC_URL"] = "http://" + getenv("TIX_ADDR")
	localDefaults["TIX_SECRET_SCANNING_KEYS_URL"] = scanSimKeysURL()
}

// simulator is the running simulator; nil when TIX_TBANK_API_URL names
// another bank.
type simulator struct {
	url string // its base URL, which TIX_TBANK_API_URL names
	sim *tbanksim.Server
	srv *http.Server
}

// startSimulator serves the simulator with the demo terminal, unless
// TIX_TBANK_API_URL points elsewhere.
func startSimulator(tbankURL string) (*simulator, error) {
	addr := getenv("TIX_ACQUIRER_SIM_ADDR")
	if strings.TrimRight(tbankURL, "/") != "http://"+addr {
		step("TIX_TBANK_API_URL is %s: not starting the T-Bank simulator (no live demo)", tbankURL)
		return nil, nil
	}
	refundAfter, err := time.ParseDuration(getenv("TIX_ACQUIRER_SIM_REFUND_AFTER"))
	if err != nil || refundAfter <= 0 {
		return nil, fmt.Errorf("TIX_ACQUIRER_SIM_REFUND_AFTER=%q: must be a positive duration such as 2s", getenv("TIX_ACQUIRER_SIM_REFUND_AFTER"))
	}
	step("Starting the T-Bank simulator on http://%s (terminal %s; SBP refunds settle after %s)", addr, demoTerminalKey, refundAfter)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("T-Bank simulator on %s: %w (set TIX_ACQUIRER_SIM_ADDR to change it)", addr, err)
	}
	sim := tbanksim.New(tbanksim.Options{RefundAfter: refundAfter, Log: slog.Default()})
	sim.AddTerminal(demoTerminalKey, getenv("TIX_SIM_TERMINAL_PASSWORD"))
	s := &simulator{url: "http://" + addr, sim: sim, srv: &http.Server{Handler: sim, ReadHeaderTimeout: readHeaderTimeout}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("T-Bank simulator stopped", "error", err)
		}
	}()
	return s, nil
}

// stop shuts the simulator down.
func (s *simulator) stop(ctx context.Context) {
	if s == nil {
		return
	}
	_ = s.srv.Shutdown(ctx)
	s.sim.Close()
}

// connectDemo connects the demo organizer to the simulator's demo terminal as
// `tixctl organizers connect-tbank` would: one CheckOrder call with the
// credentials, then the account stored with the password sealed, which marks
// the organizer verified. Receipts: taxation osn, no VAT.
func connectDemo(ctx context.Context, a *app.App, s *simulator) error {
	password := getenv("TIX_SIM_TERMINAL_PASSWORD")
	c := &tbank.Client{BaseURL: s.url, TerminalKey: demoTerminalKey, Password: password}
	if err := payment.CheckTerminal(ctx, c); err != nil {
		return fmt.Errorf("check the demo terminal at the simulator: %w", err)
	}
	now := time.Now().UTC()
	acct := ticketing.PaymentAccount{OrganizerID: demo.OrganizerID, Acquirer: ticketing.AcquirerTBank,
		TerminalKey: demoTerminalKey, Taxation: "osn", VAT: "none", ConnectedAt: now, CheckedAt: now}
	old, err := a.Store.Payments.GetPaymentAccount(ctx, demo.OrganizerID)
	if err != nil && !ticketing.IsCode(err, ticketing.CodeNotFound) {
		return err
	}
	if old != nil && old.Acquirer == acct.Acquirer && old.TerminalKey == acct.TerminalKey {
		// Already connected: keep what tixctl organizers receipt-settings set.
		acct.Taxation, acct.VAT, acct.ConnectedAt = old.Taxation, old.VAT, old.ConnectedAt
	}
	sealed, err := a.Payments.Box.Seal(password, payment.PasswordAAD(&acct))
	if err != nil {
		return err
	}
	acct.SealedPassword = sealed
	if err := a.Store.Payments.PutPaymentAccount(ctx, acct); err != nil {
		return fmt.Errorf("connect the demo organizer's terminal: %w", err)
	}
	step("Connected %s to the simulator's terminal %s (receipts: taxation %s, VAT %s)", demo.OrganizerID, demoTerminalKey, acct.Taxation, acct.VAT)
	return nil
}

// jsonStatus is the shell pipe that prints the "status" of a JSON response.
const jsonStatus = `python3 -c 'import sys,json;print(json.load(sys.stdin)["status"])'`

// printLive prints the live walkthrough: a live order paid at the simulator,
// its tickets and its refund, each line working when pasted after the ones
// before. The bank's notification arrives asynchronously, so the lines poll
// the order (up to 20 s) before going on.
func printLive(b *strings.Builder, tixctl, base string, keys []demoKey, sim *simulator) {
	if sim == nil {
		return
	}
	var live string
	for _, k := range keys {
		if k.Label == liveKeyLabel {
			live = k.Secret
		}
	}
	if live == "" {
		return
	}
	simFlag := ""
	if sim.url != "http://"+simDefaults["TIX_ACQUIRER_SIM_ADDR"] {
		simFlag = " --url " + sim.url
	}
	bearer := "-H 'Authorization: Bearer " + live + "'"
	tier := catalogimport.CatalogTierID(demo.OrganizerID, demo.RefConcert, "dance-floor")
	wait := func(status string) {
		fmt.Fprintf(b, "  for i in $(seq 100); do [ \"$(curl -s %s %s/orders/$LIVE | %s)\" = %s ] && break; sleep 0.2; done\n",
			bearer, base, jsonStatus, status)
	}
	fmt.Fprintf(b, "\nSell live, SIMULATED bank (the local T-Bank simulator at %s pays; no real money moves):\n", sim.url)
	fmt.Fprintf(b, "  LIVE=$(curl -s -X POST %s -H \"Idempotency-Key: live-$RANDOM$RANDOM\" -H 'Content-Type: application/json' \\\n", bearer)
	fmt.Fprintf(b, "    -d '{\"tier_id\":\"%s\",\"quantity\":1,\"buyer\":{\"email\":\"you@example.com\"}}' %s/orders | %s)\n", tier, base, jsonID)
	fmt.Fprintf(b, "  %s acquirer-sim pay $LIVE%s\n", tixctl, simFlag)
	wait("paid")
	fmt.Fprintf(b, "  curl -s %s %s/orders/$LIVE/tickets\n", bearer, base)
	fmt.Fprintf(b, "  curl -s -X POST %s %s/orders/$LIVE/refund\n", bearer, base)
	wait("refunded")
	fmt.Fprintf(b, "  %s orders show $LIVE\n", tixctl)
}
