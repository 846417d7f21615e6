package config_test

import (
	"strings"
	"testing"

	"tix/internal/config"
)

func TestLoad_Dashboard(t *testing.T) {
	c, err := config.Load(env(withBase()))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Dashboard.OpenSignup || c.Dashboard.Path != "/dashboard" {
		t.Errorf("defaults: %+v, want open sign-up under /dashboard", c.Dashboard)
	}
	c, err = config.Load(env(withBase("TIX_SIGNUP", "invite", "TIX_DASHBOARD_PATH", "/v1/dashboard/")))
	if err != nil {
		t.Fatal(err)
	}
	if c.Dashboard.OpenSignup || c.Dashboard.Path != "/v1/dashboard" {
		t.Errorf("invite under /v1/dashboard: %+v", c.Dashboard)
	}
	_, err = config.Load(env(withBase("TIX_SIGNUP", "anyone", "TIX_DASHBOARD_PATH", "dashboard")))
	if err == nil || !strings.Contains(err.Error(), "TIX_SIGNUP") || !strings.Contains(err.Error(), "TIX_DASHBOARD_PATH") {
		t.Errorf("bad values: %v", err)
	}
}

// The passkeys' relying party: empty by default (the dashboard derives it
// from TIX_PUBLIC_URL); an IP address, a URL or an origin outside the
// relying party is refused with what to set.
func TestLoad_DashboardWebAuthn(t *testing.T) {
	c, err := config.Load(env(withBase()))
	if err != nil || c.Dashboard.WebAuthnRPID != "" || len(c.Dashboard.WebAuthnOrigins) != 0 {
		t.Fatalf("defaults: %+v %v", c.Dashboard, err)
	}
	c, err = config.Load(env(withBase("TIX_WEBAUTHN_RP_ID", "Tix.Example", "TIX_WEBAUTHN_ORIGINS", "https://dash.tix.example/, https://tix.example")))
	if err != nil || c.Dashboard.WebAuthnRPID != "tix.example" ||
		strings.Join(c.Dashboard.WebAuthnOrigins, " ") != "https://dash.tix.example https://tix.example" {
		t.Errorf("set: %+v %v", c.Dashboard, err)
	}
	if c, err := config.Load(env(withBase("TIX_WEBAUTHN_RP_ID", "localhost", "TIX_WEBAUTHN_ORIGINS", "http://localhost:8080"))); err != nil ||
		c.Dashboard.WebAuthnOrigins[0] != "http://localhost:8080" {
		t.Errorf("localhost on plain http: %+v %v", c.Dashboard, err)
	}
	for _, bad := range [][]string{
		{"TIX_WEBAUTHN_RP_ID", "127.0.0.1"},
		{"TIX_WEBAUTHN_RP_ID", "https://tix.example"},
		{"TIX_WEBAUTHN_RP_ID", "tix.example:443"},
		{"TIX_WEBAUTHN_ORIGINS", "tix.example"},
		{"TIX_WEBAUTHN_ORIGINS", "http://tix.example"},
		{"TIX_WEBAUTHN_ORIGINS", "https://tix.example/dashboard"},
		{"TIX_WEBAUTHN_RP_ID", "tix.example", "TIX_WEBAUTHN_ORIGINS", "https://eviltix.example"},
	} {
		if _, err := config.Load(env(withBase(bad...))); err == nil || !strings.Contains(err.Error(), "TIX_WEBAUTHN_") {
			t.Errorf("%v: %v, want refused", bad, err)
		}
	}
}
