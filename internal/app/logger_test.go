package app_test

import (
	"log/slog"
	"testing"

	"tix/internal/app"
	"tix/internal/config"
	"tix/internal/logging"
)

// Every main's logger, JSON or text, adds the request id from the context.
func TestLogger_AddsTheRequestIDFromTheContext(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	for _, format := range []string{"json", "text"} {
		l := app.Logger(config.Config{LogFormat: format, LogLevel: "info"})
		if _, ok := l.Handler().(*logging.Handler); !ok {
			t.Errorf("%s logger's handler is %T, want *logging.Handler", format, l.Handler())
		}
		if slog.Default() != l {
			t.Errorf("%s logger is not the default", format)
		}
	}
}
