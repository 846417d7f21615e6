package tbank_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"tix/internal/payment/tbank"
)

const notePassword = "note-pw"

// signed is a notification body with fields, signed like the bank's.
func signed(t *testing.T, fields map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tbank.SignNotification(raw, notePassword)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func genuineFields() map[string]any {
	return map[string]any{"TerminalKey": "TixDEMO", "OrderId": "ord_1", "Success": true, "Status": "CONFIRMED",
		"PaymentId": json.Number("7000000001"), "ErrorCode": "0", "Amount": 300000}
}

func with(change func(map[string]any)) map[string]any {
	f := genuineFields()
	change(f)
	return f
}

// A genuine notification is read by the exact member names; an unknown
// member (the bank adds some) is accepted, being covered by the Token.
func TestParseNotification_ReadsAGenuineOne(t *testing.T) {
	for _, body := range []string{signed(t, genuineFields()), signed(t, with(func(f map[string]any) { f["DATA"] = map[string]any{"x": 1}; f["NewField"] = "v" }))} {
		n, err := tbank.ParseNotification([]byte(body), notePassword)
		if err != nil || n.TerminalKey != "TixDEMO" || n.OrderId != "ord_1" || n.PaymentId != "7000000001" || n.Status != "CONFIRMED" || n.Amount != 300000 || !bool(n.Success) {
			t.Errorf("ParseNotification(%s) = %+v, %v", body, n, err)
		}
	}
}

// A body whose Token verifies but which the bank would never send is refused
// as malformed: the Token concatenates values without separators, so such a
// body can be made from a captured genuine one.
func TestParseNotification_RefusesMalformedSignedBodies(t *testing.T) {
	genuine := signed(t, genuineFields())
	cases := map[string]string{
		"Amount a string":              signed(t, with(func(f map[string]any) { f["Amount"] = "300000" })),
		"Amount a fraction":            signed(t, with(func(f map[string]any) { f["Amount"] = json.Number("300000.0") })),
		"Amount an exponent":           signed(t, with(func(f map[string]any) { f["Amount"] = json.Number("3e5") })),
		"Amount null":                  signed(t, with(func(f map[string]any) { f["Amount"] = nil; f["ErrorCode"] = "3000000" })),
		"no Amount":                    signed(t, with(func(f map[string]any) { delete(f, "Amount") })),
		"no OrderId":                   signed(t, with(func(f map[string]any) { delete(f, "OrderId") })),
		"empty Status":                 signed(t, with(func(f map[string]any) { f["Status"] = "" })),
		"empty PaymentId":              signed(t, with(func(f map[string]any) { f["PaymentId"] = "" })),
		"PaymentId null":               signed(t, with(func(f map[string]any) { f["PaymentId"] = nil })),
		"PaymentId a fraction":         signed(t, with(func(f map[string]any) { f["PaymentId"] = json.Number("1.5") })),
		"lowercase paymentid only":     signed(t, with(func(f map[string]any) { f["paymentid"] = f["PaymentId"]; delete(f, "PaymentId") })),
		"case-variant paymentid added": strings.Replace(genuine, `,"Token":`, `,"paymentid":"","Token":`, 1),
		"case-variant AMOUNT":          signed(t, with(func(f map[string]any) { f["Amount"] = 0; f["AMOUNT"] = 30000 })),
		"Amount named twice":           strings.Replace(genuine, `"Amount":300000,`, `"Amount":1,"Amount":300000,`, 1),
		"Status named twice":           strings.Replace(genuine, `"Status":"CONFIRMED",`, `"Status":"REFUNDED","Status":"CONFIRMED",`, 1),
	}
	for name, body := range cases {
		if err := tbank.CheckToken([]byte(body), notePassword); err != nil {
			t.Fatalf("%s: the body's Token must verify for the case to mean anything: %v", name, err)
		}
		if n, err := tbank.ParseNotification([]byte(body), notePassword); !errors.Is(err, tbank.ErrMalformedNotification) {
			t.Errorf("%s: ParseNotification = %+v, %v; want ErrMalformedNotification", name, n, err)
		}
	}
}

// The terminal is read by its exact member name only, and a body that fails
// the Token is ErrBadToken.
func TestParseNotification_TerminalAndToken(t *testing.T) {
	if k, err := tbank.NotificationTerminal([]byte(`{"terminalkey":"TixDEMO"}`)); err == nil {
		t.Errorf("NotificationTerminal of a lowercase terminalkey = %q, want an error", k)
	}
	forged := strings.Replace(signed(t, genuineFields()), `"CONFIRMED"`, `"REFUNDED"`, 1)
	if _, err := tbank.ParseNotification([]byte(forged), notePassword); !errors.Is(err, tbank.ErrBadToken) {
		t.Errorf("forged: %v, want ErrBadToken", err)
	}
}
