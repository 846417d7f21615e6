package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"tix/internal/payment/tbanksim"
)

// defaultSimURL is where scripts/acquirersim listens by default.
const defaultSimURL = "http://127.0.0.1:8089"

// acquirerSim returns the command that settles an order's payment at the
// T-Bank simulator as the buyer or the bank would: paid, rejected, expired.
func acquirerSim(o tbanksim.Outcome) func(context.Context, *app, []string) error {
	return func(ctx context.Context, a *app, args []string) error {
		fs := flag.NewFlagSet("acquirer-sim "+string(o), flag.ContinueOnError)
		url := fs.String("url", pickEnv("TIX_ACQUIRER_SIM_URL", defaultSimURL), "the simulator's base URL")
		rest, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(rest) != 1 || rest[0] == "" {
			return usagef("acquirer-sim %s takes one order id", o)
		}
		p, err := tbanksim.SettleRemote(ctx, *url, rest[0], o)
		if err != nil {
			return err
		}
		return a.emit(p, func(w io.Writer) {
			fmt.Fprintf(w, "Simulated bank: payment %s of order %s is %s (%d kopecks).\n", p.ID, p.OrderID, p.Status, p.Amount)
		})
	}
}

func pickEnv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
