// Package config reads tix's configuration from environment variables, with the
// contract's defaults, and reports every bad value at once.
package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of the service. README.md lists them with defaults.
type Config struct {
	Table            string        // TIX_TABLE
	Region           string        // AWS_REGION
	DynamoDBEndpoint string        // TIX_DYNAMODB_ENDPOINT ("" = AWS)
	SQSEndpoint      string        // TIX_SQS_ENDPOINT ("" = AWS)
	CursorSecret     string        // TIX_CURSOR_SECRET
	ReadsPerWindow   int           // TIX_RATE_READS
	WritesPerWindow  int           // TIX_RATE_WRITES
	RateWindow       time.Duration // TIX_RATE_WINDOW
	MaxBodyBytes     int64         // TIX_MAX_BODY_BYTES
	HoldTTL          time.Duration // TIX_HOLD_TTL
	TestOrderTTL     time.Duration // TIX_TEST_ORDER_TTL
	LiveOrderTTL     time.Duration // TIX_LIVE_ORDER_TTL
	RefundDelay      time.Duration // TIX_REFUND_SETTLE_DELAY
	HoldIPRate       int           // TIX_HOLD_IP_RATE
	HoldIPMaxActive  int           // TIX_HOLD_IP_MAX_HOLDS
	QueuePrefix      string        // TIX_QUEUE_PREFIX
	LogFormat        string        // TIX_LOG_FORMAT: json | text
	LogLevel         string        // TIX_LOG_LEVEL: debug | info | warn | error
}

// Var documents one environment variable.
type Var struct{ Name, Default, Help string }

// Vars is every variable the service reads, in README order.
var Vars = []Var{
	{"TIX_TABLE", "tix", "DynamoDB table name"},
	{"AWS_REGION", "us-east-1", "AWS region"},
	{"TIX_DYNAMODB_ENDPOINT", "", "DynamoDB endpoint override (the local stack sets http://127.0.0.1:8000); empty = AWS"},
	{"TIX_SQS_ENDPOINT", "", "SQS endpoint override (the local stack sets http://127.0.0.1:4566); empty = AWS"},
	{"TIX_CURSOR_SECRET", "", "secret that signs pagination cursors and derives order poll tokens (at least 16 characters; required outside the local stack; changing it invalidates both)"},
	{"TIX_RATE_READS", "600", "requests per key per window, all but order and hold creation"},
	{"TIX_RATE_WRITES", "60", "order and hold creations per key per window"},
	{"TIX_RATE_WINDOW", "1m", "rate-limit window"},
	{"TIX_MAX_BODY_BYTES", "65536", "largest request body accepted"},
	{"TIX_HOLD_TTL", "15m", "seat hold lifetime"},
	{"TIX_TEST_ORDER_TTL", "15m", "how long a pending test order lives before it expires"},
	{"TIX_LIVE_ORDER_TTL", "15m", "how long a pending live order's SBP payment stays open"},
	{"TIX_REFUND_SETTLE_DELAY", "30s", "how long the test SBP provider takes to return a refund's money"},
	{"TIX_HOLD_IP_RATE", "20", "seat-hold requests per client IP per minute with a publishable key"},
	{"TIX_HOLD_IP_MAX_HOLDS", "3", "concurrent active seat holds per client IP with a publishable key"},
	{"TIX_QUEUE_PREFIX", "tix", "SQS queue name prefix (<prefix>-timers, <prefix>-deliveries)"},
	{"TIX_LOG_FORMAT", "json", "log format: json or text"},
	{"TIX_LOG_LEVEL", "info", "log level: debug, info, warn or error"},
}

// Load reads the configuration through getenv (os.Getenv in production). Every
// invalid value is reported, each with the variable's name and what it expects.
func Load(getenv func(string) string) (Config, error) {
	get := func(name string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		for _, v := range Vars {
			if v.Name == name {
				return v.Default
			}
		}
		return ""
	}
	var errs []error
	posInt := func(name string) int {
		n, err := strconv.Atoi(get(name))
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("%s=%q: must be a whole number >= 1", name, get(name)))
		}
		return n
	}
	dur := func(name string) time.Duration {
		d, err := time.ParseDuration(get(name))
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: must be a positive duration such as 90s, 15m or 1h", name, get(name)))
		}
		return d
	}
	c := Config{
		Table: get("TIX_TABLE"), Region: get("AWS_REGION"),
		DynamoDBEndpoint: get("TIX_DYNAMODB_ENDPOINT"), SQSEndpoint: get("TIX_SQS_ENDPOINT"),
		CursorSecret:   get("TIX_CURSOR_SECRET"),
		ReadsPerWindow: posInt("TIX_RATE_READS"), WritesPerWindow: posInt("TIX_RATE_WRITES"), RateWindow: dur("TIX_RATE_WINDOW"),
		MaxBodyBytes: int64(posInt("TIX_MAX_BODY_BYTES")),
		HoldTTL:      dur("TIX_HOLD_TTL"), TestOrderTTL: dur("TIX_TEST_ORDER_TTL"),
		LiveOrderTTL: dur("TIX_LIVE_ORDER_TTL"), RefundDelay: dur("TIX_REFUND_SETTLE_DELAY"),
		HoldIPRate: posInt("TIX_HOLD_IP_RATE"), HoldIPMaxActive: posInt("TIX_HOLD_IP_MAX_HOLDS"),
		QueuePrefix: get("TIX_QUEUE_PREFIX"),
		LogFormat:   get("TIX_LOG_FORMAT"), LogLevel: get("TIX_LOG_LEVEL"),
	}
	if c.RateWindow > 0 && c.RateWindow < time.Second {
		errs = append(errs, fmt.Errorf("TIX_RATE_WINDOW=%q: must be at least 1s", get("TIX_RATE_WINDOW")))
	}
	if len(c.CursorSecret) < 16 {
		errs = append(errs, fmt.Errorf("TIX_CURSOR_SECRET: must be set to at least 16 random characters (for example: openssl rand -hex 32)"))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("TIX_LOG_FORMAT=%q: must be json or text", c.LogFormat))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("TIX_LOG_LEVEL=%q: must be debug, info, warn or error", c.LogLevel))
	}
	if c.Table == "" {
		errs = append(errs, errors.New("TIX_TABLE: must not be empty"))
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("invalid configuration:\n  %w", errors.Join(errs...))
	}
	return c, nil
}
