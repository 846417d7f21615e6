// Command acquirersim runs the T-Bank Internet Acquiring simulator
// (internal/payment/tbanksim) as a local HTTP server: the bank's /v2/ API for
// SBP payments plus /sim/ commands to pay, reject or expire a payment and to
// switch faults on.
//
//	go run ./scripts/acquirersim -addr 127.0.0.1:8089
//	go run ./scripts/acquirersim pay <order id>      # also reject, expire, faults, payments, notifications
//
// It starts with one DEMO terminal, TIX_SIM_TERMINAL_KEY (TixSimDEMO), whose
// password is read from TIX_SIM_TERMINAL_PASSWORD_FILE or else taken from
// TIX_SIM_TERMINAL_PASSWORD (tix-sim-password): never from the command line.
// More terminals: POST /sim/terminals.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"tix/internal/payment/tbanksim"
)

func main() {
	addr := flag.String("addr", envOr("TIX_ACQUIRER_SIM_ADDR", "127.0.0.1:8089"), "listen address")
	defRefund, err := refundAfterFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "acquirersim:", err)
		os.Exit(2)
	}
	refundAfter := flag.Duration("refund-after", defRefund, "how long an SBP refund stays ASYNC_REFUNDING (default TIX_ACQUIRER_SIM_REFUND_AFTER or 2s)")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, usage) }
	flag.Parse()
	if flag.NArg() > 0 {
		if err := command(context.Background(), envOr("TIX_ACQUIRER_SIM_URL", "http://127.0.0.1:8089"), flag.Args(), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "\nacquirersim:", err)
			os.Exit(1)
		}
		return
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := terminalFromEnv()
	if err == nil {
		err = run(ctx, *addr, cfg, tbanksim.Options{RefundAfter: *refundAfter, Log: log}, func(a net.Addr) {
			log.Info("acquirer simulator listening", "addr", "http://"+a.String(), "terminal_key", cfg.key)
		})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acquirersim:", err)
		os.Exit(1)
	}
}

type terminal struct{ key, password string }

func terminalFromEnv() (terminal, error) {
	t := terminal{key: envOr("TIX_SIM_TERMINAL_KEY", "TixSimDEMO"), password: envOr("TIX_SIM_TERMINAL_PASSWORD", "tix-sim-password")}
	if f := os.Getenv("TIX_SIM_TERMINAL_PASSWORD_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return t, fmt.Errorf("read the terminal password: %w", err)
		}
		t.password = strings.TrimSpace(string(b))
	}
	if t.password == "" {
		return t, errors.New("the terminal password is empty")
	}
	return t, nil
}

// run serves the simulator on addr until ctx ends; ready is told the address.
func run(ctx context.Context, addr string, t terminal, opts tbanksim.Options, ready func(net.Addr)) error {
	sim := tbanksim.New(opts)
	defer sim.Close()
	sim.AddTerminal(t.key, t.password)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 5 * time.Second}
	ready(ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// refundAfterFromEnv is TIX_ACQUIRER_SIM_REFUND_AFTER (2s), the default of
// -refund-after, as make run's simulator reads it.
func refundAfterFromEnv() (time.Duration, error) {
	v := envOr("TIX_ACQUIRER_SIM_REFUND_AFTER", "2s")
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("TIX_ACQUIRER_SIM_REFUND_AFTER=%q: must be a positive duration such as 2s", v)
	}
	return d, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
