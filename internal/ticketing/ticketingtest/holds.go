package ticketingtest

import (
	"testing"
	"time"

	"tix/internal/ticketing"
)

func testMissingIsNotFound(t *testing.T, f *fixture) {
	tenant := ticketing.Tenant{OrganizerID: Org, Environment: ticketing.EnvTest}
	draft := Event(f.now)
	draft.ID, draft.Status, draft.Tiers, draft.Promos = "evt_conf_draft", ticketing.EventDraft, nil, nil
	must(t, "seed a draft", f.st.Events.PutEvent(f.ctx, draft))
	reads := map[string]func() error{
		"order":         func() error { _, err := f.st.OrderStore.GetOrder(f.ctx, "ord_missing"); return err },
		"order, bad id": func() error { _, err := f.st.OrderStore.GetOrder(f.ctx, "ord missing/"); return err },
		"hold":          func() error { _, err := f.st.HoldStore.GetHold(f.ctx, "hold_missing"); return err },
		"idempotency key": func() error {
			_, err := f.st.Idempotency.GetIdempotency(f.ctx, tenant, ticketing.IdemOrder, "nope")
			return err
		},
		"tier": func() error { _, _, err := f.st.Catalog.TierEvent(f.ctx, "tier_missing"); return err },
		"event": func() error {
			_, err := f.st.Catalog.GetEvent(f.ctx, Org, "evt_missing", ticketing.EnvTest)
			return err
		},
		"another's event": func() error {
			_, err := f.st.Catalog.GetEvent(f.ctx, "org_other", EventID, ticketing.EnvTest)
			return err
		},
		"draft event": func() error { _, err := f.st.Catalog.GetEvent(f.ctx, Org, draft.ID, ticketing.EnvTest); return err },
		"event with a map": func() error {
			_, err := f.st.Catalog.GetEventWithSeating(f.ctx, Org, "evt_missing", ticketing.EnvTest)
			return err
		},
		"another's seating": func() error {
			_, err := f.st.Catalog.GetEventWithSeating(f.ctx, "org_other", EventID, ticketing.EnvTest)
			return err
		},
	}
	for name, read := range reads {
		if err := read(); !ticketing.IsCode(err, ticketing.CodeNotFound) {
			t.Errorf("missing %s: %v, want not_found", name, err)
		}
	}
}

func testTierEvent(t *testing.T, f *fixture) {
	org, ev, err := f.st.Catalog.TierEvent(f.ctx, SeatTier)
	if err != nil || org != Org || ev != EventID {
		t.Fatalf("TierEvent = %q, %q, %v; want %s, %s", org, ev, err, Org, EventID)
	}
	e, err := f.st.Catalog.GetEventWithSeating(f.ctx, Org, EventID, ticketing.EnvTest)
	if err != nil || e.Seating == nil || len(e.Seating.Zones[0].Seats) != 4 || len(e.Promos) != 1 {
		t.Fatalf("event with seating %+v, %v", e, err)
	}
}

func testIdempotency(t *testing.T, f *fixture) {
	tenant := ticketing.Tenant{OrganizerID: Org, Environment: ticketing.EnvTest}
	rec := &ticketing.Idempotency{Tenant: tenant, Scope: ticketing.IdemOrder, Key: "k-1", RequestHash: "h1",
		ResourceID: "ord_first", Lease: "lease-a", LeaseUntil: f.now.Add(30 * time.Second), CreatedAt: f.now}
	got, err := f.st.Idempotency.BeginIdempotency(f.ctx, rec, f.now)
	if err != nil || got.ResourceID != "ord_first" {
		t.Fatalf("first Begin = %+v, %v", got, err)
	}
	again := *rec
	again.ResourceID, again.Lease = "ord_second", "lease-b"
	old, err := f.st.Idempotency.BeginIdempotency(f.ctx, &again, f.now)
	wantIs(t, "second Begin", err, ticketing.ErrIdempotencyTaken)
	if old == nil || old.ResourceID != "ord_first" || old.RequestHash != "h1" || old.Lease != "lease-a" {
		t.Fatalf("second Begin returned %+v, want the first record", old)
	}
	mine := *rec
	mine.Lease, mine.LeaseUntil = "lease-c", f.now.Add(time.Minute)
	wantIs(t, "claim from a stale lease", f.st.Idempotency.ClaimIdempotency(f.ctx, &mine, "lease-b"), ticketing.ErrLeaseLost)
	must(t, "claim", f.st.Idempotency.ClaimIdempotency(f.ctx, &mine, "lease-a"))
	wantIs(t, "claim twice", f.st.Idempotency.ClaimIdempotency(f.ctx, &mine, "lease-a"), ticketing.ErrLeaseLost)
	cur, err := f.st.Idempotency.GetIdempotency(f.ctx, tenant, ticketing.IdemOrder, "k-1")
	if err != nil || cur.Lease != "lease-c" || !cur.LeaseUntil.Equal(mine.LeaseUntil) || cur.ResourceID != "ord_first" {
		t.Fatalf("after the claim %+v, %v", cur, err)
	}
	must(t, "release by a stale lease", f.st.Idempotency.ReleaseIdempotency(f.ctx, rec))
	if _, err := f.st.Idempotency.GetIdempotency(f.ctx, tenant, ticketing.IdemOrder, "k-1"); err != nil {
		t.Fatalf("a stale lease released the record: %v", err)
	}
	must(t, "release", f.st.Idempotency.ReleaseIdempotency(f.ctx, &mine))
	if _, err := f.st.Idempotency.GetIdempotency(f.ctx, tenant, ticketing.IdemOrder, "k-1"); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Fatalf("released record: %v, want not_found", err)
	}
	other := *rec
	other.Tenant.Environment = ticketing.EnvLive
	if _, err := f.st.Idempotency.BeginIdempotency(f.ctx, &other, f.now); err != nil {
		t.Fatalf("the same key in another environment: %v", err)
	}
}

func testHoldSeats(t *testing.T, f *fixture) {
	h := f.hold("seat_1", "seat_2")
	must(t, "first hold", f.st.HoldStore.CreateHold(f.ctx, h, nil, nil, f.now))
	got, err := f.st.HoldStore.GetHold(f.ctx, h.ID)
	if err != nil || got.ID != h.ID || len(got.Seats) != 2 || got.Seats[1].ReservationID != h.Seats[1].ReservationID || !got.ExpiresAt.Equal(h.ExpiresAt) {
		t.Fatalf("GetHold = %+v, %v", got, err)
	}
	wantStock(t, "a held seat", f.st.HoldStore.CreateHold(f.ctx, f.hold("seat_3", "seat_2"), nil, nil, f.now), 1, true)
	if _, ok := f.seat(t, "seat_3"); ok {
		t.Fatal("a refused hold took seat_3")
	}
	s, ok := f.seat(t, "seat_2")
	if !ok || s.Status != ticketing.SeatHeld || s.HoldID != h.ID || s.TierID != SeatTier || !s.Taken(f.now) {
		t.Fatalf("seat_2 %+v, want held by %s", s, h.ID)
	}
	later := f.now.Add(15 * time.Minute)
	h2 := f.hold("seat_2")
	h2.ExpiresAt = later.Add(15 * time.Minute)
	must(t, "a hold after the first expired", f.st.HoldStore.CreateHold(f.ctx, h2, nil, nil, later))
	if s, _ := f.seat(t, "seat_2"); s.HoldID != h2.ID {
		t.Fatalf("seat_2 held by %s, want %s", s.HoldID, h2.ID)
	}
}

func testHoldConditions(t *testing.T, f *fixture) {
	tenant := ticketing.Tenant{OrganizerID: Org, Environment: ticketing.EnvTest}
	h := f.hold("seat_1")
	idem := &ticketing.Idempotency{Tenant: tenant, Scope: ticketing.IdemHold, Key: "hk", RequestHash: "h",
		ResourceID: h.ID, LeaseUntil: h.ExpiresAt, CreatedAt: f.now}
	ip := &ticketing.HoldIPUpdate{Key: "org_conf#test#192.0.2.1", Add: h.ID, Until: h.ExpiresAt}
	if _, ok, _, err := f.st.Limits.AdmitHoldIP(f.ctx, ip.Key, 10, time.Minute, f.now); !ok || err != nil {
		t.Fatalf("admit the hold request: %v, %v", ok, err)
	}
	must(t, "hold with its key and IP record", f.st.HoldStore.CreateHold(f.ctx, h, idem, ip, f.now))
	st, err := f.st.Limits.GetHoldIP(f.ctx, ip.Key)
	if err != nil || st.Version != 1 || !st.Holds[h.ID].Equal(h.ExpiresAt) {
		t.Fatalf("IP record %+v, %v", st, err)
	}
	// A live record of the key wins over everything else: the caller replays it.
	h2 := f.hold("seat_1")
	idem2 := *idem
	idem2.ResourceID = h2.ID
	wantIs(t, "second hold under a live key", f.st.HoldStore.CreateHold(f.ctx, h2, &idem2, nil, f.now), ticketing.ErrIdempotencyTaken)
	h3 := f.hold("seat_2")
	wantIs(t, "IP record read before the last write", f.st.HoldStore.CreateHold(f.ctx, h3, nil,
		&ticketing.HoldIPUpdate{Key: ip.Key, Version: 0, Add: h3.ID, Until: h3.ExpiresAt}, f.now), ticketing.ErrIPRace)
	must(t, "IP record at its version", f.st.HoldStore.CreateHold(f.ctx, h3, nil,
		&ticketing.HoldIPUpdate{Key: ip.Key, Version: 1, Add: h3.ID, Until: h3.ExpiresAt, Remove: []string{h.ID}}, f.now))
	st, _ = f.st.Limits.GetHoldIP(f.ctx, ip.Key)
	if _, old := st.Holds[h.ID]; old || st.Version != 2 || len(st.Holds) != 1 {
		t.Fatalf("IP record after the update %+v", st)
	}
	must(t, "forget", f.st.Limits.ForgetHoldIP(f.ctx, ip.Key, h3.ID))
	if st, _ = f.st.Limits.GetHoldIP(f.ctx, ip.Key); len(st.Holds) != 0 {
		t.Fatalf("forgotten hold still counted: %+v", st)
	}
	// Once the hold has expired, its key's record counts as absent.
	later := f.now.Add(15 * time.Minute)
	h4 := f.hold("seat_1")
	h4.ExpiresAt = later.Add(time.Minute)
	idem4 := *idem
	idem4.ResourceID, idem4.LeaseUntil = h4.ID, h4.ExpiresAt
	must(t, "the key after its hold expired", f.st.HoldStore.CreateHold(f.ctx, h4, &idem4, nil, later))
	rec, err := f.st.Idempotency.GetIdempotency(f.ctx, tenant, ticketing.IdemHold, "hk")
	if err != nil || rec.ResourceID != h4.ID {
		t.Fatalf("key record %+v, %v; want bound to %s", rec, err, h4.ID)
	}
}

func testReleaseSeat(t *testing.T, f *fixture) {
	h := f.hold("seat_1", "seat_2")
	must(t, "hold", f.st.HoldStore.CreateHold(f.ctx, h, nil, nil, f.now))
	wrong := h.Seats[0]
	wrong.ReservationID = h.Seats[1].ReservationID
	if ok, err := f.st.HoldStore.ReleaseSeat(f.ctx, h, wrong, f.now); ok || err != nil {
		t.Fatalf("release by another reservation: %v, %v", ok, err)
	}
	if ok, err := f.st.HoldStore.ReleaseSeat(f.ctx, h, h.Seats[0], f.now); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if ok, _ := f.st.HoldStore.ReleaseSeat(f.ctx, h, h.Seats[0], f.now); ok {
		t.Fatal("released twice")
	}
	if _, ok := f.seat(t, "seat_1"); ok {
		t.Fatal("a released seat is still taken")
	}
	if ok, _ := f.st.HoldStore.ReleaseSeat(f.ctx, h, h.Seats[1], h.ExpiresAt); ok {
		t.Fatal("released a seat whose hold had expired")
	}
}
