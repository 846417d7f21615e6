package ticketcode_test

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"
	"time"

	"tix/internal/ticketcode"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func keyPair(t *testing.T) (ticketcode.KeySet, ticketcode.Key, ed25519.PrivateKey) {
	t.Helper()
	k, priv := ticketcode.NewKey(t0)
	return ticketcode.KeySet{Keys: []ticketcode.Key{k}}, k, priv
}

var seated = ticketcode.Claims{OrderID: "ord_1", TicketNumber: "TIX-AAAAAA", EventID: "evt_1", OccurrenceID: "occ_1", SeatID: "seat_A1", Quantity: 1}

func TestVerify_AcceptsWhatItSignedAndRefusesEveryChangedMember(t *testing.T) {
	ks, k, priv := keyPair(t)
	code, err := ticketcode.Sign(seated, k.Kid, priv)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ticketcode.Verify(code, ks, t0)
	if err != nil || c.TicketNumber != seated.TicketNumber || c.SeatID != "seat_A1" || c.Kind() != ticketcode.KindTicket {
		t.Fatalf("verify own code: %+v, %v", c, err)
	}
	for _, tamper := range [][2]string{
		{`"seat_id":"seat_A1"`, `"seat_id":"seat_A2"`},
		{`"order_id":"ord_1"`, `"order_id":"ord_2"`},
		{`"ticket_number":"TIX-AAAAAA"`, `"ticket_number":"TIX-BBBBBB"`},
		{`"event_id":"evt_1"`, `"event_id":"evt_2"`},
		{`"occurrence_id":"occ_1"`, `"occurrence_id":"occ_2"`},
		{`"quantity":1`, `"quantity":2`},
		{`"livemode":false`, `"livemode":true`},
		{`"seat_id":"seat_A1",`, ``},
		{`"kid":"`, `"kid":"x`},
		{`"sig":"`, `"sig":"A`},
		{`{"v":2,`, `{"v":2,"extra":1,`},
		{`{"v":2,`, `{"v":2,"ticket_number":"TIX-BBBBBB",`},
		{`"sig":`, `"SIG":`},
		{`"test":true`, `"test":true,"tickets":["TIX-AAAAAA"]`},
	} {
		bad := strings.Replace(code, tamper[0], tamper[1], 1)
		if bad == code {
			t.Fatalf("tamper %q changed nothing in %s", tamper, code)
		}
		if _, err := ticketcode.Verify(bad, ks, t0); !errors.Is(err, ticketcode.ErrInvalid) {
			t.Errorf("tampered %q: %v, want invalid\n%s", tamper, err, bad)
		}
	}
	other, _, _ := keyPair(t)
	if _, err := ticketcode.Verify(code, other, t0); !errors.Is(err, ticketcode.ErrInvalid) {
		t.Errorf("another key set verified the code: %v", err)
	}
}

func TestVerify_ARetiredKeyVerifiesThroughItsOverlapOnly(t *testing.T) {
	ks, k, priv := keyPair(t)
	code, _ := ticketcode.Sign(seated, k.Kid, priv)
	next, nextPriv := ticketcode.NewKey(t0)
	ks.Rotate(next, t0, time.Hour)
	if s, ok := ks.Signing(); !ok || s.Kid != next.Kid {
		t.Fatalf("signing key after rotation: %+v", s)
	}
	if _, err := ticketcode.Verify(code, ks, t0.Add(59*time.Minute)); err != nil {
		t.Errorf("old code within the overlap: %v", err)
	}
	if _, err := ticketcode.Verify(code, ks, t0.Add(time.Hour)); !errors.Is(err, ticketcode.ErrInvalid) {
		t.Errorf("old code after the overlap: %v, want invalid", err)
	}
	fresh, _ := ticketcode.Sign(seated, next.Kid, nextPriv)
	if _, err := ticketcode.Verify(fresh, ks, t0.Add(48*time.Hour)); err != nil {
		t.Errorf("new key's code: %v", err)
	}
	// The JWK set a scanner downloads says when the old key ends, and says it the same.
	set := ks.JWKSet(t0)
	if len(set.Keys) != 2 || set.Keys[0].Kid != next.Kid || set.Keys[0].VerifyUntil != nil || set.Keys[1].VerifyUntil == nil ||
		set.Keys[1].Kty != "OKP" || set.Keys[1].Crv != "Ed25519" {
		t.Fatalf("JWK set %+v", set)
	}
	offline := ticketcode.FromJWKS(set)
	if _, err := ticketcode.Verify(code, offline, t0.Add(30*time.Minute)); err != nil {
		t.Errorf("offline within the overlap: %v", err)
	}
	if _, err := ticketcode.Verify(code, offline, t0.Add(2*time.Hour)); !errors.Is(err, ticketcode.ErrInvalid) {
		t.Errorf("offline after the overlap: %v", err)
	}
	if got := ks.JWKSet(t0.Add(2 * time.Hour)); len(got.Keys) != 1 {
		t.Errorf("JWK set after the overlap lists %d keys, want the signing one", len(got.Keys))
	}
}

func TestSignedBytes_AreTheDocumentedLines(t *testing.T) {
	order := ticketcode.Claims{OrderID: "ord_1", TicketNumber: "TIX-OOOOOO", EventID: "evt_1", Quantity: 2, Live: true,
		Tickets: []string{"TIX-AAAAAA", "TIX-BBBBBB"}}
	b, err := ticketcode.SignedBytes(order, "tk_1")
	want := "tix.ticket-code.v2\norder\ntk_1\nlive\nord_1\nTIX-OOOOOO\nevt_1\n\n\n2\nTIX-AAAAAA,TIX-BBBBBB"
	if err != nil || string(b) != want {
		t.Errorf("signed bytes %q (%v), want %q", b, err, want)
	}
	for _, bad := range []ticketcode.Claims{
		{OrderID: "ord_1\nx", TicketNumber: "TIX-A", EventID: "e", Quantity: 1},
		{OrderID: "ord_1", TicketNumber: "TIX-A", EventID: "e", Quantity: 1, Tickets: []string{"TIX-A,TIX-B"}},
		{OrderID: "ord_1", TicketNumber: "TIX-A", EventID: "e", Quantity: 0},
	} {
		if _, err := ticketcode.SignedBytes(bad, "tk_1"); err == nil {
			t.Errorf("signed bytes of %+v: no error", bad)
		}
	}
}
