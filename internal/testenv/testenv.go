// Package testenv gives tests real parts: a fresh table on DynamoDB Local per
// test. `make test` starts the emulators and exports their endpoints; running
// `go test` without them fails with a message that says so (never a skip).
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/config"
	"tix/internal/store"
)

// Each test process talks to DynamoDB Local under a key id of its own (unless
// one is set): make test's DynamoDB Local keeps a database per key id, each
// behind its own lock, so one package's heavy transactions do not slow every
// other package's writes (BenchmarkWriteBesideTransactions; figures in
// docs/measurements.md, "make test"). Child processes inherit it.
func init() {
	if os.Getenv("TIX_EMULATOR_KEY_ID") == "" {
		// DynamoDB Local takes only letters and digits in a key id.
		name := strings.Map(func(r rune) rune {
			if r < '0' || r > 'z' || (r > '9' && r < 'A') || (r > 'Z' && r < 'a') {
				return -1
			}
			return r
		}, strings.TrimSuffix(filepath.Base(os.Args[0]), ".test"))
		_ = os.Setenv("TIX_EMULATOR_KEY_ID", strings.ReplaceAll(UniqueName("test"+name), "-", ""))
	}
}

// DynamoEndpoint is DynamoDB Local's address for tests.
func DynamoEndpoint(tb testing.TB) string {
	tb.Helper()
	return mustEnv(tb, "TIX_TEST_DYNAMODB_ENDPOINT", "starts DynamoDB Local and fauxqs (or export TIX_TEST_DYNAMODB_ENDPOINT=http://127.0.0.1:8000 with them running)")
}

// SQSEndpoint is fauxqs's address for tests.
func SQSEndpoint(tb testing.TB) string {
	tb.Helper()
	return mustEnv(tb, "TIX_TEST_SQS_ENDPOINT", "starts DynamoDB Local and fauxqs")
}

// mustEnv is an emulator's address from the environment `make test` sets, or
// the test stops saying how to run it (what `make test` starts: how).
func mustEnv(tb testing.TB, name, how string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		tb.Fatal(name + " is not set: run the tests with `make test`, which " + how)
	}
	return v
}

// UniqueName returns prefix plus a random suffix, for tables and queues.
func UniqueName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// CursorSecret is the cursor-signing secret tests use.
var CursorSecret = []byte("test-cursor-secret")

// Store creates a fresh table on DynamoDB Local and drops it when the test ends.
// The clock may be nil (system clock).
func Store(tb testing.TB, c clock.Clock) *store.Store {
	tb.Helper()
	return StoreAt(tb, DynamoEndpoint(tb), c)
}

// StoreAt is Store over DynamoDB at endpoint (a ConflictProxy's URL).
func StoreAt(tb testing.TB, endpoint string, c clock.Clock) *store.Store {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Options{
		Table: UniqueName("tix-test"), Region: "us-east-1", Endpoint: endpoint,
		CursorSecret: CursorSecret, Clock: c,
	})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	if _, err := st.EnsureTable(ctx); err != nil {
		tb.Fatalf("create test table (is DynamoDB Local running at %s?): %v", endpoint, err)
	}
	tb.Cleanup(func() { _ = st.DeleteTable(context.Background()) })
	return st
}

// StoreUnderConflicts is a fresh store whose transactions go through a
// ConflictProxy holding their items for hold, waiting conflictWait after a
// conflict (store.SetConflictWait), on a clock fixed at now (this second).
func StoreUnderConflicts(tb testing.TB, hold, conflictWait time.Duration) (st *store.Store, proxy *ConflictProxy, now time.Time) {
	tb.Helper()
	proxy = NewConflictProxy(tb, DynamoEndpoint(tb), hold)
	now = time.Now().UTC().Truncate(time.Second)
	st = StoreAt(tb, proxy.URL, clock.NewFixed(now))
	st.SetConflictWait(conflictWait)
	return st, proxy, now
}

// StackSettings are the TIX_* settings of a whole app over st's table, fresh
// queues named after prefix and the test emulators, sending email through
// MailDev from from: what end-to-end tests load with config.Load.
func StackSettings(tb testing.TB, st *store.Store, prefix, from string) map[string]string {
	tb.Helper()
	return map[string]string{
		"TIX_CURSOR_SECRET": string(CursorSecret), "TIX_TABLE": st.TableName(),
		"TIX_DYNAMODB_ENDPOINT": DynamoEndpoint(tb), "TIX_SQS_ENDPOINT": SQSEndpoint(tb),
		"TIX_QUEUE_PREFIX": UniqueName(prefix), "TIX_WEBHOOK_KEYRING": config.LocalKeyring,
		"TIX_MAIL_SENDER": "smtp", "TIX_SMTP_ADDR": SMTPEndpoint(tb), "TIX_MAIL_FROM": from,
	}
}
