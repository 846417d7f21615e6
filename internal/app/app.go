// Package app wires configuration, clients and the HTTP server once, for every
// Lambda main and for the local runner, so that they differ only in their main.
package app

import (
	"context"
	"log/slog"
	"os"

	"tix/internal/api"
	"tix/internal/clock"
	"tix/internal/config"
	"tix/internal/store"
	"tix/internal/ticketing"
)

// App is the wired service.
type App struct {
	Config config.Config
	Store  *store.Store
	Server *api.Server
}

// Logger installs the structured logger the configuration asks for.
func Logger(cfg config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(os.Stderr, opts)
	if cfg.LogFormat == "text" {
		h = slog.NewTextHandler(os.Stderr, opts)
	}
	l := slog.New(h)
	slog.SetDefault(l)
	return l
}

// New builds the store and the server from the configuration.
func New(ctx context.Context, cfg config.Config, c clock.Clock) (*App, error) {
	if c == nil {
		c = clock.System{}
	}
	st, err := store.Open(ctx, store.Options{
		Table: cfg.Table, Region: cfg.Region, Endpoint: cfg.DynamoDBEndpoint,
		CursorSecret: []byte(cfg.CursorSecret), Clock: c,
	})
	if err != nil {
		return nil, err
	}
	return &App{Config: cfg, Store: st, Server: NewServer(cfg, st, c)}, nil
}

// NewServer builds the HTTP server over a store.
func NewServer(cfg config.Config, st *store.Store, c clock.Clock) *api.Server {
	if c == nil {
		c = clock.System{}
	}
	return &api.Server{
		Keys: st, Health: st, Clock: c,
		Catalog: &ticketing.Catalog{Store: st, Clock: c},
		Limits: api.Limits{
			ReadsPerWindow: cfg.ReadsPerWindow, WritesPerWindow: cfg.WritesPerWindow,
			Window: cfg.RateWindow, MaxBodyBytes: cfg.MaxBodyBytes,
		},
	}
}
