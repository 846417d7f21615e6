package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"tix/internal/secretscan/scantest"
)

// The local stack's GitHub: a simulated secret scanning partner
// (internal/secretscan/scantest) served in this process on
// TIX_SCAN_SIM_ADDR, whose key list TIX_SECRET_SCANNING_KEYS_URL names, so
// that `tixctl scan-sim report KEY` revokes a key as GitHub's report would.
// Pointing TIX_SECRET_SCANNING_KEYS_URL elsewhere turns it off.

func init() {
	localDefaults["TIX_SCAN_SIM_ADDR"] = "127.0.0.1:8090"
}

// scanSimKeysURL is the key list URL of the simulator at TIX_SCAN_SIM_ADDR.
func scanSimKeysURL() string { return "http://" + getenv("TIX_SCAN_SIM_ADDR") + scantest.KeysPath }

// startScanSim serves the simulator, reporting to the API at addr, unless
// keysURL (TIX_SECRET_SCANNING_KEYS_URL) names another reporter's list.
func startScanSim(keysURL, addr string) (*http.Server, error) {
	if keysURL != scanSimKeysURL() {
		step("TIX_SECRET_SCANNING_KEYS_URL is %s: not starting the secret scanning simulator", keysURL)
		return nil, nil
	}
	simAddr := getenv("TIX_SCAN_SIM_ADDR")
	ln, err := net.Listen("tcp", simAddr)
	if err != nil {
		return nil, fmt.Errorf("secret scanning simulator on %s: %w (set TIX_SCAN_SIM_ADDR to change it)", simAddr, err)
	}
	step("Starting the simulated GitHub secret scanning on http://%s (tixctl scan-sim report KEY)", simAddr)
	srv := &http.Server{Handler: scantest.NewReporter().Handler("http://" + addr + "/v1/secret-scanning/github"), ReadHeaderTimeout: readHeaderTimeout}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("secret scanning simulator stopped", "error", err)
		}
	}()
	return srv, nil
}
