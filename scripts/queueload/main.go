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
	"tix/internal/ticketing"
	"tix/internal/waitroom"
	"tix/scripts/loadstack"
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

func run(n, conc, rate int) error {
	ctx := context.Background()
	a, drop, err := loadstack.Open(ctx, "queueload", "load-queue", map[string]string{
		"TIX_WAITROOM_DIFFICULTY": "8", // the visitors' work is not what is measured
	})
	if err != nil {
		return err
	}
	defer drop()
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
	pk, err := loadstack.Organizer(ctx, a, org, "Queue load", auth.KeyRequest{Type: auth.Publishable, Origins: []string{origin}}, now)
	if err != nil {
		return "", err
	}
	row := "A"
	seats := make([]ticketing.Seat, n)
	for i := range seats {
		num := i + 1
		seats[i] = ticketing.Seat{ID: fmt.Sprintf("seat_%d", i), Label: fmt.Sprintf("A-%d", num), Row: &row, Number: &num, X: float64(i)}
	}
	ev := loadstack.Event(event, org, "Queue load", "Arena", now)
	ev.HasSeating = true
	ev.Tiers = []ticketing.Tier{{ID: "tier_seats", Name: "Seats", Price: 300000, Capacity: n, PersonsIncluded: 1, ZoneID: "zone_s", Seated: true}}
	ev.Zones = []ticketing.ZoneSummary{{ID: "zone_s", Name: "Stalls", Type: ticketing.ZoneSeated, PrimaryTierID: "tier_seats", SeatCount: n}}
	ev.Seating = &ticketing.Seating{LayoutID: "lay_q", Zones: []ticketing.Zone{{ID: "zone_s", Name: "Stalls", Type: ticketing.ZoneSeated,
		PrimaryTierID: "tier_seats", Seats: seats}}}
	return pk, a.Store.Catalog.PutEvent(ctx, ev)
}
