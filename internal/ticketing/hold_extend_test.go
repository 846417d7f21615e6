package ticketing_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/ticketing"
)

func extendReq(rids ...string) ticketing.ExtendRequest {
	return ticketing.ExtendRequest{ReservationIDs: rids}
}

// An extension keeps the listed seats of the hold a step longer: past the
// hold's first expiry no one else can take them, and they can still be
// ordered; an unlisted seat keeps its expiry.
// Extensions stop at the maximum lifetime (409); an expired hold is 410.
func TestExtendHold_StepsUpToTheMaximumLifetime(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	set := d.sales.Deps.Settings
	h, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_1", "seat_2"))
	if err != nil {
		t.Fatal(err)
	}
	first := h.ExpiresAt
	got, err := d.sales.Holds.ExtendHold(ctx, d.c, extendReq(h.Seats[0].ReservationID, h.Seats[1].ReservationID))
	if err != nil || !got.ExpiresAt.Equal(first.Add(set.HoldExtendStep)) || len(got.Seats) != 2 {
		t.Fatalf("extended %+v, %v; want expires_at %s", got, err, first.Add(set.HoldExtendStep))
	}
	// Past the first expiry, both seats are still the hold's.
	d.clk.Set(first.Add(time.Second))
	other := d.c
	other.KeyID = "key_other"
	_, err = d.sales.Holds.CreateHold(ctx, other, "", holdReq("seat_2"))
	wantCode(t, err, ticketing.CodeSeatConflict, "seat_ids[0]")
	// Up to the maximum lifetime, then 409.
	maxAt := h.CreatedAt.Add(set.HoldMaxLifetime)
	for got.ExpiresAt.Before(maxAt) {
		if got, err = d.sales.Holds.ExtendHold(ctx, d.c, extendReq(h.Seats[0].ReservationID, h.Seats[1].ReservationID)); err != nil {
			t.Fatal(err)
		}
	}
	if !got.ExpiresAt.Equal(maxAt) {
		t.Fatalf("expires_at %s, want the maximum %s", got.ExpiresAt, maxAt)
	}
	_, err = d.sales.Holds.ExtendHold(ctx, d.c, extendReq(h.Seats[1].ReservationID))
	wantCode(t, err, ticketing.CodeConflict, "")
	// The seats can be ordered until then; once it expired, the hold is gone: 410.
	d.clk.Set(maxAt.Add(-time.Second))
	o := d.order(t, "from-hold", ticketing.OrderRequest{Buyer: gaOrder(1).Buyer, SeatReservationIDs: &[]string{h.Seats[0].ReservationID}})
	if o.Status != ticketing.OrderPending {
		t.Fatalf("order from the extended hold: %+v", o)
	}
	d.clk.Set(maxAt)
	_, err = d.sales.Holds.ExtendHold(ctx, d.c, extendReq(h.Seats[1].ReservationID))
	wantCode(t, err, ticketing.CodeHoldExpired, "")
}

// A listed reservation that was released or ordered is 410; reservations of
// two holds, or not reservation ids, are 400; another key's hold is 404.
func TestExtendHold_Rules(t *testing.T) {
	d := newDomain(t)
	ctx := context.Background()
	a, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_1", "seat_2"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.sales.Holds.CreateHold(ctx, d.c, "", holdReq("seat_3"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.sales.Holds.ExtendHold(ctx, d.c, extendReq())
	wantCode(t, err, ticketing.CodeInvalidRequest, "reservation_ids")
	_, err = d.sales.Holds.ExtendHold(ctx, d.c, extendReq(a.Seats[0].ReservationID, b.Seats[0].ReservationID))
	wantCode(t, err, ticketing.CodeInvalidRequest, "reservation_ids[1]")
	_, err = d.sales.Holds.ExtendHold(ctx, d.c, extendReq("hold_x"))
	wantCode(t, err, ticketing.CodeInvalidRequest, "reservation_ids[0]")
	other := d.c
	other.OrganizerID = "org_other"
	_, err = d.sales.Holds.ExtendHold(ctx, other, extendReq(a.Seats[0].ReservationID))
	wantCode(t, err, ticketing.CodeNotFound, "reservation_ids[0]")

	// Released: the listed seat is 410; the other seat alone still extends.
	if n, err := d.sales.Holds.ReleaseHolds(ctx, d.c, []string{a.Seats[0].ReservationID}); n != 1 || err != nil {
		t.Fatalf("release %d, %v", n, err)
	}
	_, err = d.sales.Holds.ExtendHold(ctx, d.c, extendReq(a.Seats[0].ReservationID))
	wantCode(t, err, ticketing.CodeHoldExpired, "")
	if got, err := d.sales.Holds.ExtendHold(ctx, d.c, extendReq(a.Seats[1].ReservationID)); err != nil || !got.ExpiresAt.After(a.ExpiresAt) ||
		len(got.Seats) != 1 || got.Seats[0].ReservationID != a.Seats[1].ReservationID {
		t.Fatalf("the rest of a partly released hold: %+v, %v", got, err)
	}
	// Past a's first expiry its released seat is anyone's, its extended one still a's.
	d.clk.Set(a.ExpiresAt.Add(time.Second))
	buyer := d.c
	buyer.KeyID = "key_other"
	if _, err := d.sales.Holds.CreateHold(ctx, buyer, "", holdReq("seat_1")); err != nil {
		t.Fatalf("the released seat: %v", err)
	}
	_, err = d.sales.Holds.CreateHold(ctx, buyer, "", holdReq("seat_2"))
	wantCode(t, err, ticketing.CodeSeatConflict, "seat_ids[0]")
	d.clk.Set(d.now)
	// Ordered: the reservation is the order's now.
	d.order(t, "b", ticketing.OrderRequest{Buyer: gaOrder(1).Buyer, SeatReservationIDs: &[]string{b.Seats[0].ReservationID}})
	_, err = d.sales.Holds.ExtendHold(ctx, d.c, extendReq(b.Seats[0].ReservationID))
	wantCode(t, err, ticketing.CodeHoldExpired, "")
}
