package tbanksim_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/payment/tbank/tbanktest"
	"tix/internal/payment/tbanksim"
)

const (
	terminal = "TixSimDEMO"
	password = "sim-password-1"
)

// fixture is a running simulator with one DEMO terminal, a client of it and
// a notification receiver.
type fixture struct {
	sim      *tbanksim.Server
	client   *tbank.Client
	receiver *tbanktest.Receiver
}

func newFixture(t *testing.T, opts tbanksim.Options) *fixture {
	t.Helper()
	if opts.NotifyRetry == 0 {
		opts.NotifyRetry = 20 * time.Millisecond
	}
	if opts.RefundAfter == 0 {
		opts.RefundAfter = 50 * time.Millisecond
	}
	if opts.HoldFor == 0 {
		opts.HoldFor = 100 * time.Millisecond
	}
	sim := tbanksim.New(opts)
	sim.AddTerminal(terminal, password)
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	return &fixture{
		sim:      sim,
		client:   &tbank.Client{BaseURL: srv.URL, TerminalKey: terminal, Password: password},
		receiver: tbanktest.NewReceiver(t),
	}
}

func TestSimulator_MeetsTheAcquirerContract(t *testing.T) {
	f := newFixture(t, tbanksim.Options{})
	tbanktest.Contract(t, tbanktest.Env{
		Client: f.client, Receiver: f.receiver, Wait: 5 * time.Second,
		ExtraField: func(on bool) { fl := f.sim.Faults(); fl.ExtraField = on; f.sim.SetFaults(fl) },
	})
}
