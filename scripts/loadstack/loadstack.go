// Package loadstack is what the load commands (doorload, queueload) share:
// an app over the local stack on a table of its own, and the organizer,
// key and event they measure.
package loadstack

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"tix/internal/app"
	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/ticketing"
)

// EnvOr is the environment variable k, or def when it is unset or empty.
func EnvOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Open builds load command name's app over the local stack: a table of its
// own (tix-<name>-<nanoseconds>), DynamoDB Local and fauxqs at
// TIX_DYNAMODB_ENDPOINT and TIX_SQS_ENDPOINT (default: their usual local
// ports), error logs only, and settings on top. It creates the table; drop
// deletes it. target is the make target that starts the stack, for the
// error when DynamoDB Local does not answer.
func Open(ctx context.Context, name, target string, settings map[string]string) (a *app.App, drop func(), err error) {
	env := map[string]string{
		"TIX_TABLE":             fmt.Sprintf("tix-%s-%d", name, time.Now().UnixNano()),
		"TIX_DYNAMODB_ENDPOINT": EnvOr("TIX_DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"),
		"TIX_SQS_ENDPOINT":      EnvOr("TIX_SQS_ENDPOINT", "http://127.0.0.1:4566"),
		"TIX_CURSOR_SECRET":     name + "-cursor-secret",
		"TIX_WEBHOOK_KEYRING":   config.LocalKeyring,
		"TIX_LOG_LEVEL":         "error",
	}
	for k, v := range settings {
		env[k] = v
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return nil, nil, err
	}
	app.Logger(cfg)
	if a, err = app.New(ctx, cfg, nil); err != nil {
		return nil, nil, err
	}
	fmt.Printf("==> Creating table %s\n", cfg.Table)
	if _, err := a.Store.EnsureTable(ctx); err != nil {
		return nil, nil, fmt.Errorf("%w (is DynamoDB Local running? `make %s` starts it)", err, target)
	}
	return a, func() { _ = a.Store.DeleteTable(context.Background()) }, nil
}

// Organizer writes a test-mode organizer id named name and its key of r
// (OrganizerID and Environment set here), and returns the key's secret.
func Organizer(ctx context.Context, a *app.App, id, name string, r auth.KeyRequest, now time.Time) (string, error) {
	if err := a.Store.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: id, Name: name, CreatedAt: now}); err != nil {
		return "", err
	}
	r.OrganizerID, r.Environment = id, ticketing.EnvTest
	k, secret, hash, err := auth.NewKey(r, now)
	if err != nil {
		return "", err
	}
	return secret, a.Store.Keys.CreateKey(ctx, k, hash)
}

// Event is organizer org's published single event id titled title at
// venue in Moscow, a month after now, in roubles; the caller adds its
// tiers (and seating).
func Event(id, org, title, venue string, now time.Time) *ticketing.Event {
	return &ticketing.Event{ID: id, OrganizerID: org, Ref: strings.TrimPrefix(id, "evt_"), Status: ticketing.EventPublished,
		Kind: ticketing.KindSingle, Title: title, City: "Moscow", Venue: venue, StartsAt: now.Add(720 * time.Hour),
		EndsAt: now.Add(723 * time.Hour), Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now}
}
