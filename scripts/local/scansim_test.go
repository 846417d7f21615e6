package main

import (
	"strings"
	"testing"
)

// GitHub is the simulator on TIX_SCAN_SIM_ADDR unless the environment names
// another reporter's key list, which starts no simulator.
func TestScanSimDefaults(t *testing.T) {
	restoreDefaults(t)
	t.Setenv("TIX_SCAN_SIM_ADDR", "127.0.0.1:18090")
	deriveDefaults()
	if got := getenv("TIX_SECRET_SCANNING_KEYS_URL"); got != "http://127.0.0.1:18090/meta/public_keys/secret_scanning" {
		t.Errorf("TIX_SECRET_SCANNING_KEYS_URL = %q", got)
	}
	if s, err := startScanSim("https://api.github.com/meta/public_keys/secret_scanning", "127.0.0.1:18080"); s != nil || err != nil {
		t.Errorf("GitHub's list: simulator %v, %v; want none", s, err)
	}
	t.Setenv("TIX_SCAN_SIM_ADDR", "256.0.0.1:1") // no such address
	if _, err := startScanSim(scanSimKeysURL(), "127.0.0.1:18080"); err == nil || !strings.Contains(err.Error(), "TIX_SCAN_SIM_ADDR") {
		t.Errorf("unusable address: %v", err)
	}
}
