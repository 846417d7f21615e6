// Package config reads tix's configuration from environment variables, with the
// contract's defaults, and reports every bad value at once.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"tix/internal/keyring"
)

// Config is every setting of the service. docs/configuration.md lists them with defaults.
type Config struct {
	Table            string        // TIX_TABLE
	Region           string        // AWS_REGION
	DynamoDBEndpoint string        // TIX_DYNAMODB_ENDPOINT ("" = AWS)
	SQSEndpoint      string        // TIX_SQS_ENDPOINT ("" = AWS)
	CursorSecret     string        // TIX_CURSOR_SECRET
	ReadsPerWindow   int           // TIX_RATE_READS
	WritesPerWindow  int           // TIX_RATE_WRITES
	RateWindow       time.Duration // TIX_RATE_WINDOW
	IPReads          int           // TIX_RATE_IP_READS
	IPWrites         int           // TIX_RATE_IP_WRITES
	PKReads          int           // TIX_RATE_PK_READS
	PKWrites         int           // TIX_RATE_PK_WRITES
	PollReads        int           // TIX_RATE_POLL_READS
	MaxBodyBytes     int64         // TIX_MAX_BODY_BYTES
	KeyCacheTTL      time.Duration // TIX_KEY_CACHE_TTL
	KeyMissTTL       time.Duration // TIX_KEY_MISS_TTL
	HealthCacheTTL   time.Duration // TIX_HEALTH_CACHE_TTL
	CatalogCacheTTL  time.Duration // TIX_CATALOG_CACHE_TTL
	TicketKeyOverlap time.Duration // TIX_TICKET_KEY_OVERLAP
	HoldTTL          time.Duration // TIX_HOLD_TTL
	HoldExtendStep   time.Duration // TIX_HOLD_EXTEND_STEP
	HoldMaxLifetime  time.Duration // TIX_HOLD_MAX_LIFETIME
	TestOrderTTL     time.Duration // TIX_TEST_ORDER_TTL
	LiveOrderTTL     time.Duration // TIX_LIVE_ORDER_TTL
	RefundDelay      time.Duration // TIX_REFUND_SETTLE_DELAY
	HoldIPRate       int           // TIX_HOLD_IP_RATE
	HoldIPMaxActive  int           // TIX_HOLD_IP_MAX_HOLDS
	OrderIPPending   int           // TIX_ORDER_IP_MAX_PENDING
	OrderIPUnits     int           // TIX_ORDER_IP_MAX_UNITS
	PreviewIPRate    int           // TIX_PREVIEW_IP_RATE
	QueuePrefix      string        // TIX_QUEUE_PREFIX
	Payments         Payments
	Webhooks         Webhooks
	Mail             Mail
	Edge             Edge
	Waitroom         Waitroom
	SecretScanning   SecretScanning
	Dashboard        Dashboard
	LogFormat        string // TIX_LOG_FORMAT: json | text
	LogLevel         string // TIX_LOG_LEVEL: debug | info | warn | error
}

// Payments are the live payment settings (TIX_TBANK_*, TIX_PUBLIC_URL, checks).
type Payments struct {
	TBankURL     string        // TIX_TBANK_API_URL
	TBankTimeout time.Duration // TIX_TBANK_TIMEOUT
	PublicURL    string        // TIX_PUBLIC_URL
	CheckGrace   time.Duration // TIX_PAYMENT_CHECK_GRACE
	RefundCheck  time.Duration // TIX_REFUND_CHECK_INTERVAL
	AccountCache time.Duration // TIX_PAYMENT_ACCOUNT_CACHE_TTL
	// TerminalCache: TIX_PAYMENT_TERMINAL_CACHE_TTL
	TerminalCache time.Duration
}

// Webhooks are the webhook delivery settings (TIX_WEBHOOK_*, TIX_SWEEP_*).
type Webhooks struct {
	Schedule           []time.Duration    // TIX_WEBHOOK_SCHEDULE
	Timeout            time.Duration      // TIX_WEBHOOK_TIMEOUT
	DomainRate         int                // TIX_WEBHOOK_DOMAIN_RATE
	GlobalRate         int                // TIX_WEBHOOK_GLOBAL_RATE
	DisableFailures    int                // TIX_WEBHOOK_DISABLE_FAILURES
	DisableWindow      time.Duration      // TIX_WEBHOOK_DISABLE_WINDOW
	DisableFailuresNew int                // TIX_WEBHOOK_DISABLE_FAILURES_NEW
	SilentAfter        time.Duration      // TIX_WEBHOOK_SILENT_AFTER
	SecretOverlap      time.Duration      // TIX_WEBHOOK_SECRET_OVERLAP
	RedeliverDelay     time.Duration      // TIX_WEBHOOK_REDELIVER_DELAY
	Keyring            []keyring.KeyEntry // TIX_WEBHOOK_KEYRING, the sealing key first
	SweepInterval      time.Duration      // TIX_SWEEP_INTERVAL
	SweepGrace         time.Duration      // TIX_SWEEP_GRACE
}

// SecretScanning is the secret scanning partner's settings (TIX_SECRET_SCANNING_*).
type SecretScanning struct {
	KeysURL string        // TIX_SECRET_SCANNING_KEYS_URL
	KeysTTL time.Duration // TIX_SECRET_SCANNING_KEYS_TTL
}

// LocalKeyring is the webhook keyring of the local stack and the tests. It is
// public: never use it in AWS.
const LocalKeyring = "local:dGl4LWxvY2FsLW9ubHktd2ViaG9vay1rZXlyaW5nISE="

// Var documents one environment variable.
type Var struct{ Name, Default, Help string }

// Vars is every variable the service reads, in the order of docs/configuration.md.
var Vars = []Var{
	{"TIX_TABLE", "tix", "DynamoDB table name"},
	{"AWS_REGION", "us-east-1", "AWS region"},
	{"TIX_DYNAMODB_ENDPOINT", "", "DynamoDB endpoint override (the local stack sets http://127.0.0.1:8000); empty = AWS"},
	{"TIX_SQS_ENDPOINT", "", "SQS endpoint override (the local stack sets http://127.0.0.1:4566); empty = AWS"},
	{"TIX_CURSOR_SECRET", "", "secret that signs pagination cursors and derives order poll tokens (at least 16 characters; required outside the local stack; changing it invalidates both)"},
	{"TIX_CURSOR_SECRET_ARN", "", "on AWS: ARN of the Secrets Manager secret holding TIX_CURSOR_SECRET, read once at start (the stack sets it; set one of the two)"},
	{"TIX_RATE_READS", "600", "secret keys: requests per key per window, all but order and hold creation (tixctl keys set-budget overrides per key)"},
	{"TIX_RATE_WRITES", "60", "secret keys: order and hold creations per key per window"},
	{"TIX_RATE_IP_READS", "600", "publishable keys: requests per client network (IPv4 address, IPv6 /64) and key per window, all but order and hold creation"},
	{"TIX_RATE_IP_WRITES", "60", "publishable keys: order and hold creations per client network and key per window; at most 25 a second count (a client's pending-order counter stays within its transaction rate)"},
	{"TIX_RATE_PK_READS", "60000", "publishable keys: ceiling of requests per key per window, all clients together, all but order and hold creation"},
	{"TIX_RATE_PK_WRITES", "6000", "publishable keys: ceiling of order and hold creations per key per window, all clients together"},
	{"TIX_RATE_POLL_READS", "3000", "order status reads with a poll token instead of a key, per client network per window (room for many buyers behind one carrier NAT)"},
	{"TIX_RATE_WINDOW", "1m", "rate-limit window"},
	{"TIX_MAX_BODY_BYTES", "65536", "largest request body accepted"},
	{"TIX_KEY_CACHE_TTL", "10s", "how long a process reuses an API key it read: a revocation or budget change takes effect within it; 0s reads the key on every request"},
	{"TIX_KEY_MISS_TTL", "1m", "how long a process remembers that no key has a presented secret (unknown keys then cost nothing); 0s disables"},
	{"TIX_HEALTH_CACHE_TTL", "5s", "how long GET /health reuses its DynamoDB probe; 0s probes on every call"},
	{"TIX_CATALOG_CACHE_TTL", "1s", "how long a process reuses an event's detail, tiers and availability it read for publishable keys (secret keys, holds and orders always read the table; the process's own sales drop the views at once); 0s reads them on every request"},
	{"TIX_HOLD_TTL", "15m", "seat hold lifetime"},
	{"TIX_HOLD_EXTEND_STEP", "5m", "how much longer POST /seat-holds/extend keeps a live hold, each time"},
	{"TIX_HOLD_MAX_LIFETIME", "30m", "the most a hold lasts from its creation, extensions included (at least TIX_HOLD_TTL)"},
	{"TIX_TEST_ORDER_TTL", "15m", "how long a pending test order lives before it expires"},
	{"TIX_LIVE_ORDER_TTL", "15m", "how long a pending live order's SBP payment stays open"},
	{"TIX_TICKET_KEY_OVERLAP", "720h", "how long a rotated-out ticket signing key still verifies the codes it signed (tixctl ticket-keys rotate; docs/door.md)"},
	{"TIX_REFUND_SETTLE_DELAY", "30s", "how long the test SBP provider takes to return a refund's money"},
	{"TIX_HOLD_IP_RATE", "20", "seat-hold requests per client IP per minute with a publishable key"},
	{"TIX_HOLD_IP_MAX_HOLDS", "3", "concurrent active seat holds per client IP with a publishable key"},
	{"TIX_ORDER_IP_MAX_PENDING", "3", "pending (unpaid) orders per client IP (IPv6: per /64) and event with a publishable key"},
	{"TIX_ORDER_IP_MAX_UNITS", "10", "tickets and seats in pending orders per client IP (IPv6: per /64) and event with a publishable key"},
	{"TIX_PREVIEW_IP_RATE", "30", "order previews, and orders with a promo code, per client IP (IPv6: per /64) per minute with a publishable key"},
	{"TIX_WAITROOM_DIFFICULTY", "16", "the waiting room's default proof of work: leading zero bits of SHA-256(challenge + nonce), at most 30 (tixctl onsale protect --difficulty sets an event's; docs/waiting-room.md)"},
	{"TIX_WAITROOM_RATE", "5000", "the waiting room's default admissions per second once an on-sale opens: the orders per second make onsale-model requires one tier to take (tixctl onsale protect --rate sets an event's)"},
	{"TIX_WAITROOM_CHALLENGE_TTL", "2m", "how long a waiting room's proof-of-work challenge may be answered"},
	{"TIX_WAITROOM_ADMISSION_TTL", "15m", "how long a waiting room's admission lets its visitor hold and buy, from its release"},
	{"TIX_TBANK_API_URL", "https://securepay.tinkoff.ru", "T-Bank Internet Acquiring API base URL, without /v2 (the local stack sets its simulator, http://127.0.0.1:8089)"},
	{"TIX_TBANK_TIMEOUT", "10s", "timeout of one call to T-Bank; a live order whose call times out answers 502 and its retry finds the payment started"},
	{"TIX_PUBLIC_URL", "", "the API's public base URL (https://host, without /v1): the bank posts payment notifications to <it>/v1/payment-notifications/tbank and /v1/openapi.json names <it>/v1 as its server (the stack sets the API's URL; empty refuses live orders)"},
	{"TIX_PAYMENT_CHECK_GRACE", "15m", "a cancelled live order's payment is asked for again this long after it was cancelled (reconciliation)"},
	{"TIX_REFUND_CHECK_INTERVAL", "10m", "how often reconciliation asks the bank how a live refund is going, until it is settled"},
	{"TIX_PAYMENT_ACCOUNT_CACHE_TTL", "1m", "how long a process reuses an organizer's terminal settings it read (a reconnected terminal takes effect within it)"},
	{"TIX_PAYMENT_TERMINAL_CACHE_TTL", "5s", "how long the payment-notification route reuses a terminal it looked up, or found unknown (a flood of notifications naming random terminals then reads the table once per terminal); 0s looks up every notification"},
	{"TIX_QUEUE_PREFIX", "tix", "SQS queue name prefix (<prefix>-timers, <prefix>-deliveries)"},
	{"TIX_WEBHOOK_SCHEDULE", "0s,1m,5m,30m,2h,5h,10h,24h", "webhook attempts: the wait before the first attempt, then between attempts (its length is max_attempts)"},
	{"TIX_WEBHOOK_TIMEOUT", "10s", "timeout of one webhook POST"},
	{"TIX_WEBHOOK_DOMAIN_RATE", "25", "webhook POSTs per second to one receiving host; more are postponed, never dropped"},
	{"TIX_WEBHOOK_GLOBAL_RATE", "500", "webhook POSTs per second in all; more are postponed, never dropped"},
	{"TIX_WEBHOOK_DISABLE_FAILURES", "20", "consecutive failed attempts that disable an endpoint which delivered within TIX_WEBHOOK_SILENT_AFTER ..."},
	{"TIX_WEBHOOK_DISABLE_WINDOW", "24h", "... once its failures have lasted this long"},
	{"TIX_WEBHOOK_DISABLE_FAILURES_NEW", "5", "consecutive failed attempts that disable an endpoint which never delivered, or not within TIX_WEBHOOK_SILENT_AFTER"},
	{"TIX_WEBHOOK_SILENT_AFTER", "72h", "an endpoint without a successful delivery for this long is disabled as fast as a new one"},
	{"TIX_WEBHOOK_SECRET_OVERLAP", "24h", "how long a rotated-out webhook secret keeps signing beside the new one"},
	{"TIX_WEBHOOK_REDELIVER_DELAY", "2s", "a redelivered delivery's first attempt waits this long, behind live events"},
	{"TIX_WEBHOOK_KEYRING", "", "keys that encrypt webhook secrets at rest: id:base64(32 bytes)[,id:key...], the first encrypts (required outside the local stack; head -c 32 /dev/urandom | base64)"},
	{"TIX_WEBHOOK_KEYRING_ARN", "", "on AWS: ARN of the Secrets Manager secret holding the keyring as a JSON object {\"k1\": \"<base64 of 32 bytes>\", ...}, read once at start (the stack sets it; set one of the two)"},
	{"TIX_WEBHOOK_KEYRING_IDS", "", "with TIX_WEBHOOK_KEYRING_ARN: the keyring secret's ids in order, the sealing one first (k2,k1); may be empty when it holds one key"},
	{"TIX_SWEEP_INTERVAL", "1m", "how often the local runner sweeps (on AWS an EventBridge schedule runs it every minute)"},
	{"TIX_SWEEP_GRACE", "1m", "how overdue a timer, webhook fan-out or attempt is before the sweep takes its message for lost and does the work"},
	{"TIX_MAIL_SENDER", "none", "how email is sent: smtp (TIX_SMTP_ADDR; the local stack's MailDev), ses (Amazon SES v2 in AWS_REGION) or none (no email)"},
	{"TIX_MAIL_FROM", "", "the service's sending address, e.g. tickets@example.com (the organizer's sender name goes beside it); required unless TIX_MAIL_SENDER=none; with ses a verified identity"},
	{"TIX_MAIL_RECIPIENT_DAILY_CAP", "20", "emails of orders (tickets, refunds, resends) one address gets from one organizer in a UTC day, live and test together; more are skipped (reason recipient_daily_cap); 1 to 1000"},
	{"TIX_SMTP_ADDR", "127.0.0.1:1025", "with TIX_MAIL_SENDER=smtp: the SMTP server's host:port"},
	{"TIX_SMTP_TLS", "", "with smtp: empty (STARTTLS when offered), starttls (required) or tls (implicit, e.g. port 465)"},
	{"TIX_SMTP_USERNAME", "", "with smtp: AUTH PLAIN user (only over TLS or to localhost); empty = no AUTH"},
	{"TIX_SMTP_PASSWORD", "", "with smtp: AUTH PLAIN password"},
	{"TIX_SES_CONFIGURATION_SET", "", "with ses: the configuration set each message is sent with (its bounce and complaint events); empty = none"},
	{"TIX_EDGE_SECRET", "", "with a CloudFront edge in front of the API: the secret it adds as the Tix-Edge-Secret origin header; only requests carrying it have their client IP taken from CloudFront-Viewer-Address (at least 32 visible ASCII characters; empty = no edge, that header is ignored)"},
	{"TIX_EDGE_SECRET_ARN", "", "on AWS: ARN of the Secrets Manager secret holding TIX_EDGE_SECRET, read once at start (the stack sets it with -c edge=true; set one of the two)"},
	{"TIX_EDGE_ONLY", "false", "with TIX_EDGE_SECRET: true refuses (403 forbidden) keyed requests that did not come through the edge, so its WAF cannot be bypassed; /health, the API reference and the bank's notifications stay reachable"},
	{"TIX_SECRET_SCANNING_KEYS_URL", "https://api.github.com/meta/public_keys/secret_scanning", "the secret scanning reporter's key list (docs/secret-scanning.md)"},
	{"TIX_SECRET_SCANNING_KEYS_TTL", "1h", "how long a process keeps that key list"},
	{"TIX_LOG_FORMAT", "json", "log format: json or text"},
	{"TIX_SIGNUP", "open", "the organizer dashboard's sign-up: open (anyone signs up with an email address and gets a test-mode organizer) or invite (only people invited by an operator, tixctl organizers invite, or by an owner)"},
	{"TIX_DASHBOARD_PATH", "/dashboard", "the URL path the organizer dashboard is served under (the AWS stack sets /v1/dashboard, below the API's stage); its emailed links are TIX_PUBLIC_URL followed by it"},
	{"TIX_WEBAUTHN_RP_ID", "", "the dashboard's passkey relying party id, a domain (never an IP address: browsers refuse it): the host of TIX_PUBLIC_URL when empty, localhost when that host is a loopback address; a parent domain lets passkeys work on its subdomains"},
	{"TIX_WEBAUTHN_ORIGINS", "", "the origins (scheme://host[:port], comma-separated) the dashboard's passkeys are used from, each on TIX_WEBAUTHN_RP_ID or below it: the origin of TIX_PUBLIC_URL when empty (with localhost for a loopback address)"},
	{"TIX_LOG_LEVEL", "info", "log level: debug, info, warn or error"},
}

// Load reads the configuration through getenv (os.Getenv in production). Every
// invalid value is reported, each with the variable's name and what it expects.
func Load(getenv func(string) string) (Config, error) {
	r := &reader{getenv: getenv}
	c := Config{
		Table: r.get("TIX_TABLE"), Region: r.get("AWS_REGION"),
		DynamoDBEndpoint: r.get("TIX_DYNAMODB_ENDPOINT"), SQSEndpoint: r.get("TIX_SQS_ENDPOINT"),
		CursorSecret:   r.get("TIX_CURSOR_SECRET"),
		ReadsPerWindow: r.posInt("TIX_RATE_READS"), WritesPerWindow: r.posInt("TIX_RATE_WRITES"), RateWindow: r.dur("TIX_RATE_WINDOW"),
		MaxBodyBytes: int64(r.posInt("TIX_MAX_BODY_BYTES")),
		HoldTTL:      r.dur("TIX_HOLD_TTL"), TestOrderTTL: r.dur("TIX_TEST_ORDER_TTL"),
		LiveOrderTTL: r.dur("TIX_LIVE_ORDER_TTL"), RefundDelay: r.dur("TIX_REFUND_SETTLE_DELAY"),
		HoldIPRate: r.posInt("TIX_HOLD_IP_RATE"), HoldIPMaxActive: r.posInt("TIX_HOLD_IP_MAX_HOLDS"),
		QueuePrefix: r.get("TIX_QUEUE_PREFIX"),
		LogFormat:   r.get("TIX_LOG_FORMAT"), LogLevel: r.get("TIX_LOG_LEVEL"),
	}
	c.KeyCacheTTL, c.KeyMissTTL, c.HealthCacheTTL = r.nonNegDur("TIX_KEY_CACHE_TTL"), r.nonNegDur("TIX_KEY_MISS_TTL"), r.nonNegDur("TIX_HEALTH_CACHE_TTL")
	c.OrderIPPending, c.OrderIPUnits = r.posInt("TIX_ORDER_IP_MAX_PENDING"), r.posInt("TIX_ORDER_IP_MAX_UNITS")
	c.PreviewIPRate = r.posInt("TIX_PREVIEW_IP_RATE")
	c.CatalogCacheTTL = r.nonNegDur("TIX_CATALOG_CACHE_TTL")
	c.TicketKeyOverlap = r.dur("TIX_TICKET_KEY_OVERLAP")
	c.HoldExtendStep, c.HoldMaxLifetime = r.dur("TIX_HOLD_EXTEND_STEP"), r.dur("TIX_HOLD_MAX_LIFETIME")
	c.IPReads, c.IPWrites = r.posInt("TIX_RATE_IP_READS"), r.posInt("TIX_RATE_IP_WRITES")
	c.PKReads, c.PKWrites = r.posInt("TIX_RATE_PK_READS"), r.posInt("TIX_RATE_PK_WRITES")
	c.PollReads = r.posInt("TIX_RATE_POLL_READS")
	c.Payments = Payments{
		TBankURL: r.get("TIX_TBANK_API_URL"), TBankTimeout: r.dur("TIX_TBANK_TIMEOUT"), PublicURL: strings.TrimRight(r.get("TIX_PUBLIC_URL"), "/"),
		CheckGrace: r.dur("TIX_PAYMENT_CHECK_GRACE"), RefundCheck: r.dur("TIX_REFUND_CHECK_INTERVAL"),
		AccountCache: r.nonNegDur("TIX_PAYMENT_ACCOUNT_CACHE_TTL"), TerminalCache: r.nonNegDur("TIX_PAYMENT_TERMINAL_CACHE_TTL"),
	}
	c.Webhooks = r.webhooks()
	c.Mail = r.mail()
	c.Edge = r.edge()
	c.Waitroom = r.waitroom()
	c.SecretScanning = SecretScanning{KeysURL: r.get("TIX_SECRET_SCANNING_KEYS_URL"), KeysTTL: r.dur("TIX_SECRET_SCANNING_KEYS_TTL")}
	if u, err := url.Parse(c.SecretScanning.KeysURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		r.errs = append(r.errs, fmt.Errorf("TIX_SECRET_SCANNING_KEYS_URL=%q: must be an http(s) URL such as %s", c.SecretScanning.KeysURL, "https://api.github.com/meta/public_keys/secret_scanning"))
	}
	c.Dashboard = r.dashboard()
	r.check(c)
	if len(r.errs) > 0 {
		return c, fmt.Errorf("invalid configuration:\n  %w", errors.Join(r.errs...))
	}
	return c, nil
}

// reader reads variables with their defaults and collects every error.
type reader struct {
	getenv func(string) string
	errs   []error
}

// get is the variable's trimmed value, or its default from Vars.
func (r *reader) get(name string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	for _, v := range Vars {
		if v.Name == name {
			return v.Default
		}
	}
	return ""
}

func (r *reader) posInt(name string) int {
	n, err := strconv.Atoi(r.get(name))
	if err != nil || n < 1 {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: must be a whole number >= 1", name, r.get(name)))
	}
	return n
}

func (r *reader) nonNegDur(name string) time.Duration {
	d, err := time.ParseDuration(r.get(name))
	if err != nil || d < 0 {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: must be a duration such as 0s, 90s, 15m or 1h", name, r.get(name)))
	}
	return d
}

func (r *reader) dur(name string) time.Duration {
	d, err := time.ParseDuration(r.get(name))
	if err != nil || d <= 0 {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: must be a positive duration such as 90s, 15m or 1h", name, r.get(name)))
	}
	return d
}

// webhooks reads the TIX_WEBHOOK_* and TIX_SWEEP_* settings.
func (r *reader) webhooks() Webhooks {
	schedule, err := ParseSchedule(r.get("TIX_WEBHOOK_SCHEDULE"))
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("TIX_WEBHOOK_SCHEDULE=%q: %v", r.get("TIX_WEBHOOK_SCHEDULE"), err))
	}
	w := Webhooks{
		Schedule: schedule, Timeout: r.dur("TIX_WEBHOOK_TIMEOUT"),
		DomainRate: r.posInt("TIX_WEBHOOK_DOMAIN_RATE"), GlobalRate: r.posInt("TIX_WEBHOOK_GLOBAL_RATE"),
		DisableFailures: r.posInt("TIX_WEBHOOK_DISABLE_FAILURES"), DisableWindow: r.nonNegDur("TIX_WEBHOOK_DISABLE_WINDOW"),
		DisableFailuresNew: r.posInt("TIX_WEBHOOK_DISABLE_FAILURES_NEW"), SilentAfter: r.dur("TIX_WEBHOOK_SILENT_AFTER"),
		SecretOverlap: r.nonNegDur("TIX_WEBHOOK_SECRET_OVERLAP"), RedeliverDelay: r.nonNegDur("TIX_WEBHOOK_REDELIVER_DELAY"),
		SweepInterval: r.dur("TIX_SWEEP_INTERVAL"), SweepGrace: r.dur("TIX_SWEEP_GRACE"),
	}
	if ring := r.get("TIX_WEBHOOK_KEYRING"); ring == "" {
		r.errs = append(r.errs, errors.New("TIX_WEBHOOK_KEYRING: must be set: id:base64 of 32 random bytes, for example k1:$(head -c 32 /dev/urandom | base64)"))
	} else if w.Keyring, err = keyring.Parse(ring); err != nil {
		r.errs = append(r.errs, fmt.Errorf("TIX_WEBHOOK_KEYRING: %v", err))
	}
	return w
}

// check adds the rules that span a value's form: ranges, choices, presence.
func (r *reader) check(c Config) {
	if c.RateWindow > 0 && c.RateWindow < time.Second {
		r.errs = append(r.errs, fmt.Errorf("TIX_RATE_WINDOW=%q: must be at least 1s", r.get("TIX_RATE_WINDOW")))
	}
	if len(c.CursorSecret) < 16 {
		r.errs = append(r.errs, fmt.Errorf("TIX_CURSOR_SECRET: must be set to at least 16 random characters (for example: openssl rand -hex 32)"))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		r.errs = append(r.errs, fmt.Errorf("TIX_LOG_FORMAT=%q: must be json or text", c.LogFormat))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		r.errs = append(r.errs, fmt.Errorf("TIX_LOG_LEVEL=%q: must be debug, info, warn or error", c.LogLevel))
	}
	if c.Table == "" {
		r.errs = append(r.errs, errors.New("TIX_TABLE: must not be empty"))
	}
	if c.HoldMaxLifetime > 0 && c.HoldMaxLifetime < c.HoldTTL {
		r.errs = append(r.errs, fmt.Errorf("TIX_HOLD_MAX_LIFETIME=%q: must be at least TIX_HOLD_TTL (%s)", r.get("TIX_HOLD_MAX_LIFETIME"), c.HoldTTL))
	}
}

// ParseSchedule reads a webhook retry schedule such as
// "0s,1m,5m,30m,2h,5h,10h,24h": 1 to 20 non-negative durations.
func ParseSchedule(s string) ([]time.Duration, error) {
	parts := strings.Split(s, ",")
	if len(parts) > 20 {
		return nil, fmt.Errorf("at most 20 attempts, got %d", len(parts))
	}
	out := make([]time.Duration, 0, len(parts))
	for _, p := range parts {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a duration such as 0s, 1m or 2h", strings.TrimSpace(p))
		}
		out = append(out, d)
	}
	return out, nil
}
