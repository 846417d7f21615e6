package testenv

import "testing"

// SMTPEndpoint is the local SMTP sink's (MailDev's) host:port for tests.
func SMTPEndpoint(tb testing.TB) string {
	tb.Helper()
	return mustEnv(tb, "TIX_TEST_SMTP_ENDPOINT", "starts MailDev (or export TIX_TEST_SMTP_ENDPOINT=127.0.0.1:1025 TIX_TEST_MAILDEV_URL=http://127.0.0.1:1080 with it running: scripts/stack.sh start)")
}

// MailDevURL is the base URL of MailDev's web inbox and HTTP API for tests.
func MailDevURL(tb testing.TB) string {
	tb.Helper()
	return mustEnv(tb, "TIX_TEST_MAILDEV_URL", "starts MailDev (or export TIX_TEST_MAILDEV_URL=http://127.0.0.1:1080 TIX_TEST_SMTP_ENDPOINT=127.0.0.1:1025 with it running)")
}
