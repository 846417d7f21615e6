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
