package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// The Lambda entry point, fed the API Gateway v2 events of events/ (DynamoDB Local behind).
func TestHandler_SampleAPIGatewayEvents(t *testing.T) {
	ctx := context.Background()
	st := testenv.Store(t, nil)
	cfg, err := config.Load(func(k string) string {
		if k == "TIX_CURSOR_SECRET" {
			return string(testenv.CursorSecret)
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	if err := st.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_l", Name: "L", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	secret := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	// The key only accepts the source IP API Gateway reports, not the X-Forwarded-For in the events.
	if err := st.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_l", Type: auth.Secret, Environment: ticketing.EnvTest,
		Scopes: auth.AllScopes, AllowedIPs: []string{"198.51.100.7"}, CreatedAt: now}, auth.Hash(secret)); err != nil {
		t.Fatal(err)
	}
	slug := "lambda-show"
	ev := &ticketing.Event{ID: "evt_lambda", OrganizerID: "org_l", Ref: "l", Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "Lambda Show", Slug: &slug, City: "Kazan", Venue: "Hall", StartsAt: now.Add(48 * time.Hour), EndsAt: now.Add(50 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{{ID: "tier_l", Name: "GA", Price: 100000, Capacity: 10, PersonsIncluded: 1, Color: "#000000"}}}
	if err := st.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	h := handler(&app.App{Config: cfg, Store: st, Server: app.NewServer(cfg, st, nil)})
	for _, sample := range testenv.LoadAPIEvents(t, "catalog-", map[string]string{"SK_TEST": secret, "EVENT_ID": "evt_lambda", "EVENT_SLUG": slug}) {
		t.Run(sample.Name, func(t *testing.T) {
			res, err := h(ctx, sample.Event)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != sample.Status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, sample.Status, res.Body)
			}
			if !json.Valid([]byte(res.Body)) {
				t.Fatalf("body is not JSON: %s", res.Body)
			}
			if !strings.HasSuffix(sample.Event.RawPath, "/health") && res.Headers["Tix-Request-Id"] == "" {
				t.Errorf("no Tix-Request-Id: %v", res.Headers)
			}
		})
	}
}
