package config_test

import (
	"strings"
	"testing"
	"time"

	"tix/internal/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoad_DefaultsAreTheContractFigures(t *testing.T) {
	c, err := config.Load(env(map[string]string{"TIX_CURSOR_SECRET": "0123456789abcdef", "TIX_WEBHOOK_KEYRING": config.LocalKeyring}))
	if err != nil {
		t.Fatal(err)
	}
	if c.ReadsPerWindow != 600 || c.WritesPerWindow != 60 || c.RateWindow != time.Minute || c.HoldTTL != 15*time.Minute ||
		c.TestOrderTTL != 15*time.Minute || c.MaxBodyBytes != 65536 || c.Table != "tix" ||
		c.KeyCacheTTL != 10*time.Second || c.KeyMissTTL != time.Minute || c.HealthCacheTTL != 5*time.Second ||
		c.OrderIPPending != 3 || c.OrderIPUnits != 10 || c.PreviewIPRate != 30 {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestLoad_EveryBadValueIsReportedByName(t *testing.T) {
	_, err := config.Load(env(map[string]string{
		"TIX_RATE_READS": "many", "TIX_RATE_WINDOW": "-1s", "TIX_HOLD_TTL": "15", "TIX_LOG_FORMAT": "xml", "TIX_CURSOR_SECRET": "short",
		"TIX_WEBHOOK_SCHEDULE": "0s,soon", "TIX_WEBHOOK_KEYRING": "k1:short", "TIX_KEY_CACHE_TTL": "-1s", "TIX_HEALTH_CACHE_TTL": "soon",
		"TIX_ORDER_IP_MAX_PENDING": "0", "TIX_PREVIEW_IP_RATE": "lots",
	}))
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, name := range []string{"TIX_RATE_READS", "TIX_RATE_WINDOW", "TIX_HOLD_TTL", "TIX_LOG_FORMAT", "TIX_CURSOR_SECRET", "TIX_WEBHOOK_SCHEDULE", "TIX_WEBHOOK_KEYRING", "TIX_KEY_CACHE_TTL", "TIX_HEALTH_CACHE_TTL",
		"TIX_ORDER_IP_MAX_PENDING", "TIX_PREVIEW_IP_RATE"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
}
