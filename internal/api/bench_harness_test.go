package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

type benchHarness struct {
	st      *store.Store
	handler http.Handler
	secret  string
	pk      string // a publishable key of orgA bound to shopOrigin
	catalog *ticketing.Catalog
	clock   *clock.Fixed
}

// newBenchHarness seeds a table with the listing fixtures, a 2,000-seat and a
// 20,000-seat map, and a key with a budget large enough not to interfere.
func newBenchHarness(b *testing.B) *benchHarness {
	b.Helper()
	ctx := context.Background()
	clk := clock.NewFixed(t0)
	st := testenv.Store(b, clk)
	_ = st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: orgA, Name: orgA, CreatedAt: t0})
	for _, e := range []*ticketing.Event{baseEvent(orgA, "evt_concert", "Concert", day(3)), bigSeatedEvent(orgA, "evt_big", 2000), bigSeatedEvent(orgA, "evt_huge", 20000)} {
		if err := st.Catalog.PutEvent(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 30; i++ {
		e := baseEvent(orgA, "evt_list_"+string(rune('a'+i%26))+string(rune('a'+i/26)), "Listed", day(4+i))
		if err := st.Catalog.PutEvent(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	secret := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	if err := st.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: orgA, Type: auth.Secret, Environment: ticketing.EnvTest, Scopes: auth.AllScopes, CreatedAt: t0}, auth.Hash(secret)); err != nil {
		b.Fatal(err)
	}
	pk := auth.NewSecret(auth.Publishable, ticketing.EnvTest)
	if err := st.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: orgA, Type: auth.Publishable, Environment: ticketing.EnvTest,
		Scopes: auth.DefaultScopes(auth.Publishable), AllowedOrigins: []string{shopOrigin}, CreatedAt: t0}, auth.Hash(pk)); err != nil {
		b.Fatal(err)
	}
	catalog := &ticketing.Catalog{Store: st.Catalog, Clock: clk}
	srv := &api.Server{Keys: st.Keys, Health: st, Clock: clk, Catalog: catalog,
		Limits: api.Limits{ReadsPerWindow: 1 << 30, WritesPerWindow: 1 << 30, IPReadsPerWindow: 1 << 30, PKReadsPerWindow: 1 << 30,
			Window: time.Minute, MaxBodyBytes: 64 << 10}}
	return &benchHarness{st: st, handler: srv.Handler(), secret: secret, pk: pk, catalog: catalog, clock: clk}
}
