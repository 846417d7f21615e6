package ticketcode_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"tix/internal/ticketcode"
)

func strp(s string) *string { return &s }

func admissionPage() *ticketcode.AdmissionPage {
	return &ticketcode.AdmissionPage{Object: "admission_list", EventID: "evt_1", GeneratedAt: "2026-11-21T12:00:00Z", HasMore: true,
		NextCursor: strp("c"), Data: []ticketcode.AdmissionEntry{
			{TicketNumber: "TIX-AAAAAA", OrderID: "ord_1", OrderTicketNumber: strp("TIX-OOOOOO"), State: ticketcode.StateValid,
				Seat: &ticketcode.Seat{Label: "A1", SeatCode: strp("seat_A1")}},
			{TicketNumber: "TIX-BBBBBB", OrderID: "ord_1", OccurrenceID: strp("occ_1"), State: ticketcode.StateAdmitted,
				CheckIn: &ticketcode.AdmissionCheckIn{ID: "chk_BBBBBB_x", TicketNumber: "TIX-BBBBBB", Gate: "north", At: "2026-11-21T11:00:00Z"}},
		}}
}

// The signed bytes are exactly the documented lines (docs/door.md).
func TestAdmissionBytes_AreTheDocumentedLines(t *testing.T) {
	p := admissionPage()
	p.Kid = "tk_1"
	b, err := ticketcode.AdmissionBytes(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "tix.admission-list.v1\ntk_1\ntest\nevt_1\n\n2026-11-21T12:00:00Z\ntrue\n2\n" +
		"TIX-AAAAAA\tord_1\tTIX-OOOOOO\t\tseat_A1\tvalid\t\t\t\n" +
		"TIX-BBBBBB\tord_1\t\tocc_1\t\tadmitted\tchk_BBBBBB_x\t2026-11-21T11:00:00Z\tnorth"
	if string(b) != want {
		t.Fatalf("signed bytes\n%q\nwant\n%q", b, want)
	}
	p.Data[0].CheckIn = &ticketcode.AdmissionCheckIn{Gate: "a\tb"}
	if _, err := ticketcode.AdmissionBytes(p); err == nil {
		t.Error("a gate with a TAB was signed")
	}
}

// A signed page verifies as its JSON, and any change to what a door decides
// on (a state, a check-in, an entry dropped, the time, has_more) or another
// organizer's key or a retired key past its overlap does not.
func TestVerifyAdmissionPage_RefusesEveryChange(t *testing.T) {
	ks, k, priv := keyPair(t)
	p := admissionPage()
	if err := ticketcode.SignAdmissionPage(p, k.Kid, priv); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(p)
	read := func(s string) *ticketcode.AdmissionPage {
		var q ticketcode.AdmissionPage
		if err := json.Unmarshal([]byte(s), &q); err != nil {
			t.Fatal(err)
		}
		return &q
	}
	if err := ticketcode.VerifyAdmissionPage(read(string(body)), ks, t0); err != nil {
		t.Fatalf("own page: %v", err)
	}
	for _, tamper := range [][2]string{
		{`"state":"admitted"`, `"state":"valid"`},
		{`"state":"valid"`, `"state":"admitted"`},
		{`"gate":"north"`, `"gate":"south"`},
		{`"at":"2026-11-21T11:00:00Z"`, `"at":"2026-11-21T10:00:00Z"`},
		{`"generated_at":"2026-11-21T12:00:00Z"`, `"generated_at":"2026-11-22T12:00:00Z"`},
		{`"has_more":true`, `"has_more":false`},
		{`"seat_code":"seat_A1"`, `"seat_code":"seat_A2"`},
		{`"livemode":false`, `"livemode":true`},
		{`"event_id":"evt_1"`, `"event_id":"evt_2"`},
		{`"ticket_number":"TIX-AAAAAA"`, `"ticket_number":"TIX-CCCCCC"`},
	} {
		bad := strings.Replace(string(body), tamper[0], tamper[1], 1)
		if bad == string(body) {
			t.Fatalf("tamper %q changed nothing", tamper)
		}
		if err := ticketcode.VerifyAdmissionPage(read(bad), ks, t0); !errors.Is(err, ticketcode.ErrInvalid) {
			t.Errorf("tampered %q: %v, want invalid", tamper, err)
		}
	}
	dropped := read(string(body))
	dropped.Data = dropped.Data[:1]
	if err := ticketcode.VerifyAdmissionPage(dropped, ks, t0); !errors.Is(err, ticketcode.ErrInvalid) {
		t.Errorf("an entry dropped: %v", err)
	}
	other, _, _ := keyPair(t)
	if err := ticketcode.VerifyAdmissionPage(read(string(body)), other, t0); !errors.Is(err, ticketcode.ErrInvalid) {
		t.Errorf("another organizer's keys verified it: %v", err)
	}
	next, _ := ticketcode.NewKey(t0)
	ks.Rotate(next, t0, time.Hour)
	if err := ticketcode.VerifyAdmissionPage(read(string(body)), ks, t0.Add(59*time.Minute)); err != nil {
		t.Errorf("within the overlap: %v", err)
	}
	if err := ticketcode.VerifyAdmissionPage(read(string(body)), ks, t0.Add(time.Hour)); !errors.Is(err, ticketcode.ErrInvalid) {
		t.Errorf("past the overlap: %v", err)
	}
}
