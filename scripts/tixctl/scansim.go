package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"tix/internal/auth"
	"tix/internal/secretscan"
	"tix/internal/secretscan/scantest"
)

// defaultScanSimURL is where make run serves its simulated GitHub secret scanning.
const defaultScanSimURL = "http://127.0.0.1:8090"

// scanSimReport has the local stack's simulated GitHub report tokens found in
// public: it signs them as GitHub does and sends them to tix's endpoint.
func scanSimReport(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("scan-sim report", flag.ContinueOnError)
	url := fs.String("url", pickEnv("TIX_SCAN_SIM_URL", defaultScanSimURL), "the simulator's base URL")
	source := fs.String("source", "https://github.com/example/shop/blob/main/.env", "where the tokens were found")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("scan-sim report takes one or more tokens found in public (keys or any string)")
	}
	ms := make([]secretscan.Match, len(rest))
	for i, tok := range rest {
		ms[i] = secretscan.Match{Token: tok, Type: "tix_secret_key", URL: *source, Source: "content"}
	}
	status, body, err := scantest.ReportRemote(ctx, *url, ms...)
	if err != nil {
		return err
	}
	var fb []secretscan.Feedback
	if status != 200 || json.Unmarshal(body, &fb) != nil {
		return fmt.Errorf("tix answered the report with %d: %s", status, body)
	}
	return a.emit(fb, func(w io.Writer) {
		for _, f := range fb {
			fmt.Fprintf(w, "%s  %s\n", f.Label, masked(f.TokenRaw))
		}
	})
}

// masked is a reported token as a person may see it: a key's kind and last
// four characters, or how long anything else is.
func masked(tok string) string {
	if t, env, ok := auth.ParseSecret(tok); ok {
		return fmt.Sprintf("%s_%s_...%s", t, env, tok[len(tok)-4:])
	}
	return fmt.Sprintf("(%d characters, no tix key)", len(tok))
}
