// Command queueload runs the waiting room on the local stack with simulated
// visitors (docs/waiting-room.md, Measured): VISITORS visitors, each from a
// loopback network of its own (127.a.b.0/24), join the queue of a protected
// on-sale through the real router and middleware of the holds function
// over DynamoDB Local, a tenth before the opening and the rest after it,
// and poll their status until admitted. It reports admission fairness (how
// many visitors who joined after the opening were released ahead of one
// who joined earlier: must be 0), how many holds succeeded without a valid
// admission (none, with a copied one: must be 0), and p50/p99 of join and
// status. Bounded (VISITORS at most 50,000) and loopback only.
//
//	go run ./scripts/queueload -visitors 20000
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"time"

	"tix/internal/api"
	"tix/internal/app"
	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

const (
	org    = "org_queueload"
	event  = "evt_queueload"
	origin = "https://shop.example"
)

func main() {
	visitors := flag.Int("visitors", 20000, "visitors of the waiting room (at most 50,000)")
	conc := flag.Int("concurrency", 64, "requests at once")
	rate := flag.Int("rate", 2000, "admissions a second")
	flag.Parse()
	if *visitors < 10 || *visitors > 50000 || *conc < 1 || *conc > 512 {
		fmt.Fprintln(os.Stderr, "queueload: -visitors 10..50000, -concurrency 1..512")
		os.Exit(2)
	}
	if err := run(*visitors, *conc, *rate); err != nil {
		fmt.Fprintln(os.Stderr, "queueload:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(n, conc, rate int) error {
	ctx := context.Background()
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "TIX_TABLE":
			return fmt.Sprintf("tix-queueload-%d", time.Now().UnixNano())
		case "TIX_DYNAMODB_ENDPOINT":
			return envOr("TIX_DYNAMODB_ENDPOINT", "http://127.0.0.1:8000")
		case "TIX_SQS_ENDPOINT":
			return envOr("TIX_SQS_ENDPOINT", "http://127.0.0.1:4566")
		case "TIX_CURSOR_SECRET":
			return "queue-load-cursor-secret"
		case "TIX_WEBHOOK_KEYRING":
			return config.LocalKeyring
		case "TIX_LOG_LEVEL":
			return "error"
		case "TIX_WAITROOM_DIFFICULTY":
			return "8" // the visitors' work is not what is measured
		}
		return ""
	})
	if err != nil {
		return err
	}
	app.Logger(cfg)
	a, err := app.New(ctx, cfg, nil)
	if err != nil {
		return err
	}
	fmt.Printf("==> Creating table %s\n", cfg.Table)
	if _, err := a.Store.EnsureTable(ctx); err != nil {
		return fmt.Errorf("%w (is DynamoDB Local running? `make load-queue` starts it)", err)
	}
	defer func() { _ = a.Store.DeleteTable(context.Background()) }()
	seats := max(n/10, 1)
	pk, err := seed(ctx, a, seats)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(a.Server.Handler(api.GroupHolds))
	defer srv.Close()
	// Time for the first tenth to join before the opening.
	opens := time.Now().Add(2*time.Second + time.Duration(n/10)*2*time.Millisecond).Truncate(time.Second)
	if _, err := a.Waitroom.ProtectEvent(ctx, ticketing.Tenant{OrganizerID: org, Environment: ticketing.EnvTest},
		waitroom.ProtectRequest{EventID: event, OpensAt: opens, Rate: rate}); err != nil {
		return err
	}
	fmt.Printf("==> %d visitors, %d at once, opening at %s, %d admissions/s; %d of them then hold a seat\n", n, conc, opens.Format(time.TimeOnly), rate, seats)
	l := &load{base: srv.URL + "/v1", pk: pk, opens: opens, sem: make(chan struct{}, conc)}
	start := time.Now()
	vs, err := l.visit(n, seats)
	if err != nil {
		return err
	}
	return l.report(vs, time.Since(start))
}

// seed writes the organizer, its storefront's publishable key and the
// on-sale's seated event of n seats.
func seed(ctx context.Context, a *app.App, n int) (string, error) {
	now := time.Now().UTC()
	st := a.Store
	if err := st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: org, Name: "Queue load", CreatedAt: now}); err != nil {
		return "", err
	}
	pk := auth.NewSecret(auth.Publishable, ticketing.EnvTest)
	if err := st.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: org, Type: auth.Publishable, Environment: ticketing.EnvTest,
		Scopes: auth.DefaultScopes(auth.Publishable), AllowedOrigins: []string{origin}, CreatedAt: now}, auth.Hash(pk)); err != nil {
		return "", err
	}
	row := "A"
	seats := make([]ticketing.Seat, n)
	for i := range seats {
		num := i + 1
		seats[i] = ticketing.Seat{ID: fmt.Sprintf("seat_%d", i), Label: fmt.Sprintf("A-%d", num), Row: &row, Number: &num, X: float64(i)}
	}
	ev := &ticketing.Event{ID: event, OrganizerID: org, Ref: "queueload", Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "Queue load", City: "Moscow", Venue: "Arena", StartsAt: now.Add(720 * time.Hour), EndsAt: now.Add(723 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now, HasSeating: true,
		Tiers: []ticketing.Tier{{ID: "tier_seats", Name: "Seats", Price: 300000, Capacity: n, PersonsIncluded: 1, ZoneID: "zone_s", Seated: true}},
		Zones: []ticketing.ZoneSummary{{ID: "zone_s", Name: "Stalls", Type: ticketing.ZoneSeated, PrimaryTierID: "tier_seats", SeatCount: n}},
		Seating: &ticketing.Seating{LayoutID: "lay_q", Zones: []ticketing.Zone{{ID: "zone_s", Name: "Stalls", Type: ticketing.ZoneSeated,
			PrimaryTierID: "tier_seats", Seats: seats}}}}
	return pk, st.Catalog.PutEvent(ctx, ev)
}
