package ticketing_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

func holdReq(seats ...string) ticketing.HoldRequest {
	return ticketing.HoldRequest{EventID: ptr(ticketingtest.EventID), SeatIDs: seats}
}

func TestCreateHold_HoldsSeatsAtCatalogPrices(t *testing.T) {
	d := newDomain(t)
	h, err := d.sales.Holds.CreateHold(context.Background(), d.c, "", holdReq("seat_1", "seat_2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Seats) != 2 || h.TotalBasePrice != 600000 || !h.ExpiresAt.Equal(d.now.Add(d.sales.Deps.Settings.HoldTTL)) {
		t.Fatalf("hold %+v", h)
	}
	if hid, ok := ticketing.HoldIDOfReservation(h.Seats[1].ReservationID); !ok || hid != h.ID {
		t.Fatalf("reservation %s names hold %s, want %s", h.Seats[1].ReservationID, hid, h.ID)
	}
}

func TestCreateHold_Rules(t *testing.T) {
	cases := []struct {
		name  string
		req   ticketing.HoldRequest
		code  ticketing.Code
		param string
	}{
		{"no event", ticketing.HoldRequest{SeatIDs: []string{"seat_1"}}, ticketing.CodeInvalidRequest, "event_id"},
		{"no seats", holdReq(), ticketing.CodeInvalidRequest, "seat_ids"},
		{"a seat twice", holdReq("seat_1", "seat_1"), ticketing.CodeInvalidRequest, "seat_ids[1]"},
		{"too many seats", holdReq("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"), ticketing.CodeInvalidRequest, "seat_ids"},
		{"unknown event", ticketing.HoldRequest{EventID: ptr("evt_none"), SeatIDs: []string{"seat_1"}}, ticketing.CodeNotFound, "event_id"},
		{"unknown seat", holdReq("seat_1", "seat_9"), ticketing.CodeNotFound, "seat_ids[1]"},
		{"occurrence of a single event", ticketing.HoldRequest{EventID: ptr(ticketingtest.EventID), OccurrenceID: ptr("occ_1"), SeatIDs: []string{"seat_1"}},
			ticketing.CodeInvalidRequest, "occurrence_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDomain(t)
			_, err := d.sales.Holds.CreateHold(context.Background(), d.c, "", c.req)
			wantCode(t, err, c.code, c.param)
		})
	}
}

func TestCreateHold_ReplayConflictAndExpiry(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	h, err := d.sales.Holds.CreateHold(ctx, d.c, "hk-1", holdReq("seat_1", "seat_2"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("replay returns the same hold", func(t *testing.T) {
		again, err := d.sales.Holds.CreateHold(ctx, d.c, "hk-1", holdReq("seat_1", "seat_2"))
		if err != nil || again.ID != h.ID {
			t.Fatalf("replay %v, %v; want %s", again, err, h.ID)
		}
	})
	t.Run("another body under the key is a conflict", func(t *testing.T) {
		_, err := d.sales.Holds.CreateHold(ctx, d.c, "hk-1", holdReq("seat_3"))
		wantCode(t, err, ticketing.CodeConflict, "")
	})
	t.Run("a held seat is a seat conflict naming it", func(t *testing.T) {
		_, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_3", "seat_2"))
		wantCode(t, err, ticketing.CodeSeatConflict, "seat_ids[1]")
		if _, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_3")); err != nil {
			t.Fatalf("the refused hold kept seat_3: %v", err)
		}
	})
	t.Run("an expired hold frees its seats and its key", func(t *testing.T) {
		d.clk.Set(h.ExpiresAt)
		other, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_2"))
		if err != nil {
			t.Fatalf("hold an expired hold's seat: %v", err)
		}
		again, err := d.sales.Holds.CreateHold(ctx, d.c, "hk-1", holdReq("seat_1"))
		if err != nil || again.ID == h.ID || again.ID == other.ID {
			t.Fatalf("the key after its hold expired: %v, %v; want a new hold", again, err)
		}
	})
}

func TestReleaseHolds_OnlyTheCallersLiveReservations(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	h, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_1", "seat_2"))
	if err != nil {
		t.Fatal(err)
	}
	r0, r1 := h.Seats[0].ReservationID, h.Seats[1].ReservationID
	other := d.c
	other.KeyID = "key_other"
	if n, err := d.sales.Holds.ReleaseHolds(ctx, other, []string{r0}); n != 0 || err != nil {
		t.Fatalf("another key released %d, %v", n, err)
	}
	if n, err := d.sales.Holds.ReleaseHolds(ctx, d.c, []string{r0, r0, "rsv_unknown", "garbage"}); n != 1 || err != nil {
		t.Fatalf("released %d, %v; want 1", n, err)
	}
	if n, _ := d.sales.Holds.ReleaseHolds(ctx, d.c, []string{r0}); n != 0 {
		t.Fatalf("released a seat twice")
	}
	if _, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_1")); err != nil {
		t.Fatalf("a released seat is still held: %v", err)
	}
	d.clk.Advance(d.sales.Deps.Settings.HoldTTL)
	if n, _ := d.sales.Holds.ReleaseHolds(ctx, d.c, []string{r1}); n != 0 {
		t.Fatal("released a seat of an expired hold")
	}
	_, err = d.sales.Holds.ReleaseHolds(ctx, d.c, nil)
	wantCode(t, err, ticketing.CodeInvalidRequest, "reservation_ids")
}

func TestCreateHold_PublishableKeyIPLimits(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	pk := d.c
	pk.Publishable = true
	var holds []*ticketing.Hold
	for i := range d.sales.Deps.Settings.HoldIPMaxActive {
		h, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_"+string(rune('1'+i))))
		if err != nil {
			t.Fatalf("hold %d: %v", i, err)
		}
		holds = append(holds, h)
	}
	_, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_4"))
	wantCode(t, err, ticketing.CodeRateLimited, "")
	if n, _ := d.sales.Holds.ReleaseHolds(ctx, pk, []string{holds[0].Seats[0].ReservationID}); n != 1 {
		t.Fatal("release")
	}
	if _, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_4")); err != nil {
		t.Fatalf("a released hold still counts against the IP: %v", err)
	}
	d.clk.Advance(time.Hour)
	if _, err := d.sales.Holds.CreateHold(ctx, pk, "", holdReq("seat_1")); err != nil {
		t.Fatalf("expired holds still count against the IP: %v", err)
	}
}
