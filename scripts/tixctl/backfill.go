package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// backfillView is orders backfill-buyer-index's output.
type backfillView struct {
	Updated int `json:"updated"` // orders given their buyer index keys by this run
}

// ordersBackfillBuyerIndex gives the orders written before the buyer index
// held orders their keys, so that the dashboard finds them by email
// (docs/aws.md). It scans the table once; a rerun updates nothing.
func ordersBackfillBuyerIndex(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("orders backfill-buyer-index", flag.ContinueOnError)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("orders backfill-buyer-index takes no arguments")
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	n, err := st.Search.BackfillBuyerKeys(ctx)
	if err != nil {
		return err
	}
	v := backfillView{Updated: n}
	return a.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "%d order(s) given their buyer index keys; the dashboard now finds them by email.\n", n)
	})
}
