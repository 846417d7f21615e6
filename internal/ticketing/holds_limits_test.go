package ticketing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"tix/internal/ticketing"
)

// A hold takes at most MaxSeatsPerHold seats, inclusive: ten seat ids pass
// the count rule (the next rule, that each seat exists, names the first
// missing one).
func TestCreateHold_MaxSeatsPerHoldIsInclusive(t *testing.T) {
	d := newDomain(t)
	var ids []string
	for i := 1; i <= ticketing.MaxSeatsPerHold; i++ {
		ids = append(ids, fmt.Sprintf("seat_%d", i))
	}
	_, err := d.sales.Holds.CreateHold(context.Background(), d.c, "", holdReq(ids...))
	wantCode(t, err, ticketing.CodeNotFound, "seat_ids[4]")
}

// A release lists at most MaxReleaseIDs reservations, inclusive, none empty.
func TestReleaseHolds_AtMostMaxReleaseIDsNoneEmpty(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	var ids []string
	for i := range ticketing.MaxReleaseIDs {
		ids = append(ids, fmt.Sprintf("rsv_unknown%d", i))
	}
	if n, err := d.sales.Holds.ReleaseHolds(ctx, d.c, ids); n != 0 || err != nil {
		t.Fatalf("%d unknown reservations: released %d, %v; want none, no error", len(ids), n, err)
	}
	_, err := d.sales.Holds.ReleaseHolds(ctx, d.c, append(ids, "rsv_one_more"))
	wantCode(t, err, ticketing.CodeInvalidRequest, "reservation_ids")
	_, err = d.sales.Holds.ReleaseHolds(ctx, d.c, []string{"rsv_a", ""})
	wantCode(t, err, ticketing.CodeInvalidRequest, "reservation_ids[1]")
}

// A hold made with a publishable key is bound to its key and client
// network: the same key from another IP cannot release it.
func TestReleaseHolds_APublishableHoldIsBoundToItsIP(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	pk := d.c
	pk.Publishable = true
	h, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_1"))
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := pk
	elsewhere.IP = "198.51.100.7"
	rid := []string{h.Seats[0].ReservationID}
	if n, err := d.sales.Holds.ReleaseHolds(ctx, elsewhere, rid); n != 0 || err != nil {
		t.Fatalf("another IP released %d, %v; want none", n, err)
	}
	if n, err := d.sales.Holds.ReleaseHolds(ctx, pk, rid); n != 1 || err != nil {
		t.Fatalf("its own IP released %d, %v; want 1", n, err)
	}
}

// A publishable key's hold counts against the client's unit cap, inclusive:
// exactly OrderIPMaxUnits seats are held, one more is refused.
func TestCreateHold_PublishableHoldUpToTheClientsUnitCap(t *testing.T) {
	d := newDomain(t)
	d.sales.Deps.Settings.OrderIPMaxUnits = 2
	ctx := context.Background()
	pk := d.c
	pk.Publishable = true
	_, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_1", "seat_2", "seat_3"))
	wantCode(t, err, ticketing.CodeRateLimited, "")
	if _, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_1", "seat_2")); err != nil {
		t.Fatalf("a hold at the cap: %v", err)
	}
}

// ipRaces is a hold store whose per-IP record always changed meanwhile.
type ipRaces struct {
	ticketing.HoldStore
	tries int
}

func (s *ipRaces) CreateHold(context.Context, *ticketing.Hold, *ticketing.Idempotency, *ticketing.HoldIPUpdate, time.Time) error {
	s.tries++
	if s.tries >= 50 {
		return errors.New("ipRaces: 50 tries")
	}
	return ticketing.ErrIPRace
}

// A publishable hold that loses the race for its IP's record rereads it and
// tries again: five tries in all, then asks the client to retry shortly.
func TestCreateHold_IPRaceTriedFiveTimes(t *testing.T) {
	d := newDomain(t)
	st := d.st.Sales()
	races := &ipRaces{HoldStore: st.HoldStore}
	st.HoldStore = races
	d.sales = ticketing.NewSales(st, d.sales.Deps)
	pk := d.c
	pk.Publishable = true
	_, err := d.sales.Holds.CreateHold(context.Background(), pk, "", holdReq("seat_1"))
	if !ticketing.IsCode(err, ticketing.CodeRateLimited) || races.tries != 5 {
		t.Fatalf("hold: %v after %d tries; want rate_limited after 5", err, races.tries)
	}
}

// A retried hold request (same Idempotency-Key, same request) answers the
// hold it made, even when its IP holds as many holds as it may: a replay
// writes nothing, so it does not count again.
func TestCreateHold_AReplayAtTheIPsCapAnswersTheSameHold(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	pk := d.c
	pk.Publishable = true
	var last *ticketing.Hold
	for i := range d.sales.Deps.Settings.HoldIPMaxActive {
		h, err := d.sales.Holds.CreateHold(ctx, pk, fmt.Sprintf("key-%d", i), holdReq(fmt.Sprintf("seat_%d", i+1)))
		if err != nil {
			t.Fatalf("hold %d: %v", i, err)
		}
		last = h
	}
	n := d.sales.Deps.Settings.HoldIPMaxActive - 1
	again, err := d.sales.Holds.CreateHold(ctx, pk, fmt.Sprintf("key-%d", n), holdReq(fmt.Sprintf("seat_%d", n+1)))
	if err != nil || again.ID != last.ID {
		t.Fatalf("replay at the IP's cap: %+v, %v; want hold %s", again, err, last.ID)
	}
}

// A publishable hold counts against its IP's active holds until none of its
// seats is held: releasing part of it keeps it counted, releasing the rest
// frees the place, and one request releasing two holds frees both places.
func TestReleaseHolds_APartlyReleasedHoldStillCountsAgainstItsIP(t *testing.T) {
	d := newDomain(t)
	d.sales.Deps.Settings.HoldIPMaxActive = 1
	ctx := context.Background()
	pk := d.c
	pk.Publishable = true
	h, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_1", "seat_2"))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.sales.Holds.ReleaseHolds(ctx, pk, []string{h.Seats[0].ReservationID}); n != 1 || err != nil {
		t.Fatalf("release one seat: %d, %v", n, err)
	}
	_, err = d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_3"))
	wantCode(t, err, ticketing.CodeRateLimited, "")
	if n, err := d.sales.Holds.ReleaseHolds(ctx, pk, []string{h.Seats[1].ReservationID}); n != 1 || err != nil {
		t.Fatalf("release the other seat: %d, %v", n, err)
	}
	if _, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_3")); err != nil {
		t.Fatalf("a hold once the IP's only hold is released: %v", err)
	}
}

func TestReleaseHolds_OneRequestFreesEveryHoldItEnds(t *testing.T) {
	d := newDomain(t)
	d.sales.Deps.Settings.HoldIPMaxActive = 2
	ctx := context.Background()
	pk := d.c
	pk.Publishable = true
	var rids []string
	for _, seat := range []string{"seat_1", "seat_2"} {
		h, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq(seat))
		if err != nil {
			t.Fatal(err)
		}
		rids = append(rids, h.Seats[0].ReservationID)
	}
	if n, err := d.sales.Holds.ReleaseHolds(ctx, pk, rids); n != 2 || err != nil {
		t.Fatalf("release both holds: %d, %v", n, err)
	}
	for _, seat := range []string{"seat_3", "seat_4"} {
		if _, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq(seat)); err != nil {
			t.Fatalf("hold of %s after both holds ended: %v", seat, err)
		}
	}
}
