package ticketing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tix/internal/ticketcode"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

func (d *door) upload(t *testing.T, scans ...ticketing.OfflineScan) []ticketing.ScanResult {
	t.Helper()
	res, err := d.in.Batch(context.Background(), d.c.Tenant, ticketing.ScanBatch{Gate: "north-1", KeyID: "key_door", Scans: scans})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	return res
}

func offline(id, code string, at time.Time) ticketing.OfflineScan {
	return ticketing.OfflineScan{ClientScanID: id, Code: code, ScannedAt: at}
}

func (d *door) admission(t *testing.T, number string) *ticketing.CheckIn {
	t.Helper()
	st, err := d.st.Tickets.TicketState(context.Background(), d.c.Tenant.Environment, number)
	if err != nil {
		t.Fatal(err)
	}
	return st.CheckIn
}

// An offline batch keeps each ticket's earliest scan whatever the order of
// upload, answers the later ones duplicate with the first, and an order's
// code answers each ticket.
func TestBatch_FirstScanWinsAndDuplicatesAreReported(t *testing.T) {
	d := newDoor(t)
	o, orderCode, codes := d.paid(t, "off-1", 3)
	now := d.clk.Now()
	a, b := o.Tickets[0].Number, o.Tickets[1].Number
	res := d.upload(t,
		offline("dev1:2", codes[a], now.Add(-5*time.Minute)), // later scan first in the batch
		offline("dev1:1", codes[a], now.Add(-10*time.Minute)),
		offline("dev1:3", b, now.Add(-9*time.Minute)),
		offline("dev1:4", orderCode, now.Add(-8*time.Minute)),
	)
	if res[1].Result != ticketing.ResultAdmitted || !res[1].CheckIn.At.Equal(now.Add(-10*time.Minute)) || res[1].CheckIn.Gate != "north-1" {
		t.Fatalf("earliest scan: %+v", res[1])
	}
	if res[0].Result != ticketing.ResultDuplicate || res[0].CheckIn.ID != res[1].CheckIn.ID {
		t.Fatalf("later scan: %+v, want duplicate of %s", res[0], res[1].CheckIn.ID)
	}
	if res[2].Result != ticketing.ResultAdmitted || res[2].TicketNumber != b {
		t.Fatalf("typed number: %+v", res[2])
	}
	order := res[3]
	if order.Result != ticketing.ResultAdmitted || order.TicketNumber != o.TicketNumber || len(order.Tickets) != 3 ||
		order.Tickets[0].Result != ticketing.ResultDuplicate || order.Tickets[1].Result != ticketing.ResultDuplicate ||
		order.Tickets[2].Result != ticketing.ResultAdmitted {
		t.Fatalf("order code: %+v", order)
	}
	if got := d.admission(t, a); got == nil || got.ID != res[1].CheckIn.ID {
		t.Fatalf("stored admission %+v, want the earliest scan", got)
	}
}

// An offline scan earlier than an online admission replaces it: the online
// one is reported superseded, later scans see the earlier one, and
// re-uploading the batch changes nothing.
func TestBatch_AnEarlierOfflineScanReplacesALaterOnlineOne(t *testing.T) {
	d := newDoor(t)
	o, _, codes := d.paid(t, "off-2", 1)
	n := o.Tickets[0].Number
	online := d.scan(t, codes[n], "south")
	wantResult(t, online, ticketing.ResultAdmitted)
	d.clk.Advance(time.Minute)
	batch := []ticketing.OfflineScan{offline("dev2:1", codes[n], online.CheckIn.At.Add(-time.Minute)), offline("dev2:2", codes[n], online.CheckIn.At.Add(time.Second))}
	res := d.upload(t, batch...)
	if res[0].Result != ticketing.ResultAdmitted || res[0].Superseded == nil || res[0].Superseded.ID != online.CheckIn.ID {
		t.Fatalf("earlier offline scan: %+v, want admitted superseding %s", res[0], online.CheckIn.ID)
	}
	if res[1].Result != ticketing.ResultDuplicate || res[1].CheckIn.ID != res[0].CheckIn.ID {
		t.Fatalf("later offline scan: %+v", res[1])
	}
	again := d.scan(t, codes[n], "east")
	if again.Result != ticketing.ResultAlreadyAdmitted || again.CheckIn.ID != res[0].CheckIn.ID {
		t.Fatalf("online rescan: %+v, want the offline admission", again)
	}
	if _, err := d.in.Undo(context.Background(), d.c.Tenant, online.CheckIn.ID); err == nil {
		t.Error("the superseded online check-in could still be undone")
	}
	stored := d.admission(t, n)
	re := d.upload(t, batch...)
	for i := range re {
		if re[i].Result != []string{ticketing.ResultAdmitted, ticketing.ResultDuplicate}[i] || re[i].CheckIn.ID != res[0].CheckIn.ID || re[i].Superseded != nil {
			t.Errorf("re-upload %d: %+v", i, re[i])
		}
	}
	if got := d.admission(t, n); *got != *stored {
		t.Errorf("re-upload changed the admission: %+v, was %+v", got, stored)
	}
	// The same client scan id with another time is a conflict and changes nothing.
	changed := d.upload(t, offline("dev2:1", codes[n], online.CheckIn.At.Add(-2*time.Minute)))
	if changed[0].Result != ticketing.ResultConflict {
		t.Fatalf("changed re-upload: %+v", changed[0])
	}
	if got := d.admission(t, n); *got != *stored {
		t.Errorf("a conflicting re-upload changed the admission")
	}
}

// Refunded, foreign and forged scans are answered as online and write no admission.
func TestBatch_RefusesWhatOnlineRefuses(t *testing.T) {
	d := newDoor(t)
	ctx := context.Background()
	o, _, codes := d.paid(t, "off-3", 1)
	if _, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, o.ID, nil); err != nil {
		t.Fatal(err)
	}
	ok, _, okCodes := d.paid(t, "off-4", 1)
	now := d.clk.Now()
	res, err := d.in.Batch(ctx, d.c.Tenant, ticketing.ScanBatch{Gate: "g", EventID: "evt_other", Scans: []ticketing.OfflineScan{
		offline("r1", okCodes[ok.Tickets[0].Number], now)}})
	if err != nil || res[0].Result != ticketing.ResultWrongEvent {
		t.Fatalf("wrong event: %+v %v", res, err)
	}
	res = d.upload(t, offline("r2", codes[o.Tickets[0].Number], now), offline("r3", "TIX-ZZZZZZ", now), offline("r4", `{"v":2}`, now))
	for i, want := range []string{ticketing.ResultRefunded, ticketing.ResultInvalid, ticketing.ResultInvalid} {
		if res[i].Result != want {
			t.Errorf("scan %d: %s, want %s", i, res[i].Result, want)
		}
	}
	if d.admission(t, o.Tickets[0].Number) != nil || d.admission(t, ok.Tickets[0].Number) != nil {
		t.Error("a refused scan wrote an admission")
	}
}

func TestBatch_MalformedUploadsWriteNothing(t *testing.T) {
	d := newDoor(t)
	o, _, codes := d.paid(t, "off-5", 1)
	code, now := codes[o.Tickets[0].Number], d.clk.Now()
	many := make([]ticketing.OfflineScan, ticketing.MaxBatchScans+1)
	for i := range many {
		many[i] = offline(fmt.Sprint("m", i), code, now)
	}
	for _, c := range []struct {
		name, param string
		b           ticketing.ScanBatch
	}{
		{"no gate", "gate", ticketing.ScanBatch{Scans: []ticketing.OfflineScan{offline("a", code, now)}}},
		{"no scans", "scans", ticketing.ScanBatch{Gate: "g"}},
		{"too many", "scans", ticketing.ScanBatch{Gate: "g", Scans: many}},
		{"bad id", "scans[1].client_scan_id", ticketing.ScanBatch{Gate: "g", Scans: []ticketing.OfflineScan{offline("a", code, now), offline("a b", code, now)}}},
		{"same id", "scans[1].client_scan_id", ticketing.ScanBatch{Gate: "g", Scans: []ticketing.OfflineScan{offline("a", code, now), offline("a", code, now)}}},
		{"future", "scans[0].scanned_at", ticketing.ScanBatch{Gate: "g", Scans: []ticketing.OfflineScan{offline("a", code, now.Add(time.Hour))}}},
		{"too old", "scans[0].scanned_at", ticketing.ScanBatch{Gate: "g", Scans: []ticketing.OfflineScan{offline("a", code, now.Add(-8*24*time.Hour))}}},
		{"no code", "scans[0].code", ticketing.ScanBatch{Gate: "g", Scans: []ticketing.OfflineScan{offline("a", " ", now)}}},
	} {
		_, err := d.in.Batch(context.Background(), d.c.Tenant, c.b)
		wantCode(t, err, ticketing.CodeInvalidRequest, c.param)
	}
	if d.admission(t, o.Tickets[0].Number) != nil {
		t.Error("a malformed upload admitted the ticket")
	}
}

// The admission list pages every ticket of the event with its state, each
// page signed by the organizer's current key.
func TestAdmissionList_PagesEveryTicketSigned(t *testing.T) {
	d := newDoor(t)
	ctx := context.Background()
	o, _, codes := d.paid(t, "list-1", 3)
	r, _, _ := d.paid(t, "list-2", 1)
	if _, err := d.sales.Orders.RefundOrder(ctx, d.c.Tenant, r.ID, nil); err != nil {
		t.Fatal(err)
	}
	admitted := d.scan(t, codes[o.Tickets[1].Number], "north")
	ks, err := d.keys.KeySet(ctx, d.c.Tenant)
	if err != nil {
		t.Fatal(err)
	}
	jwks := ticketcode.FromJWKS(ks.JWKSet(d.clk.Now()))
	states := map[string]ticketcode.AdmissionEntry{}
	cursor, pages := "", 0
	for {
		p, err := d.in.AdmissionList(ctx, d.c.Tenant, ticketing.AdmissionQuery{EventID: ticketingtest.EventID, Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if err := ticketcode.VerifyAdmissionPage(p, jwks, d.clk.Now()); err != nil {
			t.Fatalf("page %d does not verify: %v", pages, err)
		}
		pages++
		for _, e := range p.Data {
			states[e.TicketNumber] = e
		}
		if !p.HasMore {
			break
		}
		cursor = *p.NextCursor
	}
	if pages != 2 || len(states) != 4 {
		t.Fatalf("%d pages, %d tickets, want 2 and 4", pages, len(states))
	}
	if e := states[o.Tickets[1].Number]; e.State != ticketcode.StateAdmitted || e.CheckIn.ID != admitted.CheckIn.ID || *e.OrderTicketNumber != o.TicketNumber {
		t.Errorf("admitted ticket: %+v", e)
	}
	if e := states[o.Tickets[0].Number]; e.State != ticketcode.StateValid || e.CheckIn != nil || e.OrderID != o.ID {
		t.Errorf("valid ticket: %+v", e)
	}
	if e := states[r.Tickets[0].Number]; e.State != ticketcode.StateRefunded {
		t.Errorf("refunded ticket: %+v", e)
	}
	_, err = d.in.AdmissionList(ctx, d.c.Tenant, ticketing.AdmissionQuery{EventID: ticketingtest.EventID, KeyEvents: []string{"evt_other"}})
	wantCode(t, err, ticketing.CodeNotFound, "")
	_, err = d.in.AdmissionList(ctx, d.c.Tenant, ticketing.AdmissionQuery{EventID: ticketingtest.EventID, Limit: ticketing.MaxAdmissionPage + 1})
	wantCode(t, err, ticketing.CodeInvalidRequest, "limit")
}
