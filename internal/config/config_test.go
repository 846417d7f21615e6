package config_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"tix/internal/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// withBase is a valid minimal environment with the given name, value pairs set.
func withBase(kv ...string) map[string]string {
	m := map[string]string{"TIX_CURSOR_SECRET": "0123456789abcdef", "TIX_WEBHOOK_KEYRING": config.LocalKeyring}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestLoad_DefaultsAreTheContractFigures(t *testing.T) {
	c, err := config.Load(env(map[string]string{"TIX_CURSOR_SECRET": "0123456789abcdef", "TIX_WEBHOOK_KEYRING": config.LocalKeyring}))
	if err != nil {
		t.Fatal(err)
	}
	if c.ReadsPerWindow != 600 || c.WritesPerWindow != 60 || c.RateWindow != time.Minute || c.HoldTTL != 15*time.Minute ||
		c.TestOrderTTL != 15*time.Minute || c.MaxBodyBytes != 65536 || c.Table != "tix" ||
		c.KeyCacheTTL != 10*time.Second || c.KeyMissTTL != time.Minute || c.HealthCacheTTL != 5*time.Second || c.CatalogCacheTTL != time.Second ||
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

func TestLoad_WebhookSettingsParseIntoPlainValues(t *testing.T) {
	const k1, k2 = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="
	c, err := config.Load(env(map[string]string{
		"TIX_CURSOR_SECRET": "0123456789abcdef", "TIX_WEBHOOK_KEYRING": "new:" + k2 + ", old:" + k1,
		"TIX_WEBHOOK_SCHEDULE": "0s, 2s,1m",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{0, 2 * time.Second, time.Minute}; !slices.Equal(c.Webhooks.Schedule, want) {
		t.Errorf("schedule %v, want %v", c.Webhooks.Schedule, want)
	}
	ring := c.Webhooks.Keyring
	if len(ring) != 2 || ring[0].ID != "new" || ring[1].ID != "old" || len(ring[0].Key) != 32 || ring[0].Key[0] != 1 || ring[1].Key[0] != 0 {
		t.Errorf("keyring %+v, want new (sealing) then old, 32 bytes each", ring)
	}
}

func TestLoad_BadKeyringAndScheduleSayWhy(t *testing.T) {
	for _, tc := range []struct{ name, ring, schedule, want string }{
		{"ShortKey", "k1:AAAA", "0s", `TIX_WEBHOOK_KEYRING: keyring key "k1" is 3 bytes, AES-256 needs 32`},
		{"NoID", "AAAA", "0s", "TIX_WEBHOOK_KEYRING: keyring entry 1 has no id"},
		{"NegativeWait", config.LocalKeyring, "0s,-1m", `TIX_WEBHOOK_SCHEDULE="0s,-1m": "-1m" is not a duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Load(env(map[string]string{
				"TIX_CURSOR_SECRET": "0123456789abcdef", "TIX_WEBHOOK_KEYRING": tc.ring, "TIX_WEBHOOK_SCHEDULE": tc.schedule,
			}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoad_Mail(t *testing.T) {
	base := withBase()
	c, err := config.Load(env(base))
	if err != nil || c.Mail.Sender != "none" || c.Mail.SMTPAddr != "127.0.0.1:1025" || c.Mail.RecipientDailyCap != 20 {
		t.Fatalf("mail defaults: %+v, %v", c.Mail, err)
	}
	c, err = config.Load(env(withBase("TIX_MAIL_SENDER", "ses", "TIX_MAIL_FROM", "Tix <tickets@tix.example>", "TIX_SES_CONFIGURATION_SET", "tix")))
	if err != nil || c.Mail.From != "tickets@tix.example" || c.Mail.SESConfigurationSet != "tix" {
		t.Fatalf("ses: %+v, %v", c.Mail, err)
	}
	for _, bad := range [][]string{
		{"TIX_MAIL_SENDER", "carrier-pigeon"},
		{"TIX_MAIL_SENDER", "ses"},
		{"TIX_MAIL_SENDER", "smtp", "TIX_MAIL_FROM", "not an address"},
		{"TIX_MAIL_SENDER", "smtp", "TIX_MAIL_FROM", "t@x.example", "TIX_SMTP_ADDR", "nohost"},
		{"TIX_MAIL_SENDER", "smtp", "TIX_MAIL_FROM", "t@x.example", "TIX_SMTP_TLS", "ssl3"},
		{"TIX_MAIL_RECIPIENT_DAILY_CAP", "0"},
		{"TIX_MAIL_RECIPIENT_DAILY_CAP", "1001"},
	} {
		_, err := config.Load(env(withBase(bad...)))
		if err == nil || !strings.Contains(err.Error(), bad[len(bad)-2]) {
			t.Errorf("%v: %v, want an error naming %s", bad, err, bad[len(bad)-2])
		}
	}
}

// TestLoad_Edge: no edge by default; a secret long enough and visible
// turns it on; TIX_EDGE_ONLY needs the secret.
func TestLoad_Edge(t *testing.T) {
	base := withBase()
	c, err := config.Load(env(base))
	if err != nil || c.Edge != (config.Edge{}) {
		t.Fatalf("defaults: %+v, %v; want no edge", c.Edge, err)
	}
	secret := strings.Repeat("s", config.MinEdgeSecret)
	c, err = config.Load(env(withBase("TIX_EDGE_SECRET", secret, "TIX_EDGE_ONLY", "true")))
	if err != nil || c.Edge.Secret != secret || !c.Edge.Only {
		t.Fatalf("edge: %+v, %v", c.Edge, err)
	}
	for _, bad := range [][]string{
		{"TIX_EDGE_SECRET", "short"},
		{"TIX_EDGE_SECRET", strings.Repeat("s", 20) + " " + strings.Repeat("s", 20)},
		{"TIX_EDGE_ONLY", "true"},
		{"TIX_EDGE_SECRET", secret, "TIX_EDGE_ONLY", "yes"},
	} {
		if _, err := config.Load(env(withBase(bad...))); err == nil || !strings.Contains(err.Error(), bad[len(bad)-2]) {
			t.Errorf("%v: %v, want an error naming %s", bad, err, bad[len(bad)-2])
		}
	}
}

// The secret scanning key list is GitHub's by default, kept an hour; another
// reporter's list (tests, the local stack) is a URL; anything else is refused by name.
func TestLoad_SecretScanning(t *testing.T) {
	c, err := config.Load(env(withBase()))
	if err != nil {
		t.Fatal(err)
	}
	if c.SecretScanning.KeysURL != "https://api.github.com/meta/public_keys/secret_scanning" || c.SecretScanning.KeysTTL != time.Hour {
		t.Fatalf("defaults: %+v", c.SecretScanning)
	}
	c, err = config.Load(env(withBase("TIX_SECRET_SCANNING_KEYS_URL", "http://127.0.0.1:9000/keys", "TIX_SECRET_SCANNING_KEYS_TTL", "5m")))
	if err != nil || c.SecretScanning.KeysURL != "http://127.0.0.1:9000/keys" || c.SecretScanning.KeysTTL != 5*time.Minute {
		t.Fatalf("%+v %v", c.SecretScanning, err)
	}
	_, err = config.Load(env(withBase("TIX_SECRET_SCANNING_KEYS_URL", "api.github.com/keys", "TIX_SECRET_SCANNING_KEYS_TTL", "0s")))
	for _, name := range []string{"TIX_SECRET_SCANNING_KEYS_URL", "TIX_SECRET_SCANNING_KEYS_TTL"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

// Hold extensions: 5 more minutes each, up to 30 in all by default; a maximum
// shorter than the hold's own lifetime is refused by name.
func TestLoad_HoldExtension(t *testing.T) {
	base := map[string]string{"TIX_CURSOR_SECRET": "0123456789abcdef", "TIX_WEBHOOK_KEYRING": config.LocalKeyring}
	c, err := config.Load(env(base))
	if err != nil || c.HoldExtendStep != 5*time.Minute || c.HoldMaxLifetime != 30*time.Minute {
		t.Fatalf("defaults: step %s, max %s, %v", c.HoldExtendStep, c.HoldMaxLifetime, err)
	}
	base["TIX_HOLD_MAX_LIFETIME"] = "10m"
	if _, err := config.Load(env(base)); err == nil || !strings.Contains(err.Error(), "TIX_HOLD_MAX_LIFETIME") {
		t.Fatalf("a maximum below TIX_HOLD_TTL: %v", err)
	}
}
