package api_test

import (
	"context"
	"net/http"
	"testing"

	"tix/internal/config"
	"tix/internal/payment"
	"tix/internal/payment/tbank"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The bank's notification route, through the real router: no key, the Token
// under the terminal's password decides; a genuine notification is answered
// with the plain-text OK the bank waits for, anything else is a 403 that
// changes nothing. (internal/app's live tests run it against the simulator
// end to end.)
func TestPaymentNotification_TokenDecides(t *testing.T) {
	h := newHarness(t)
	h.organizer("org_bank")
	box, err := webhook.NewAESBox(config.LocalKeyring)
	if err != nil {
		t.Fatal(err)
	}
	acct := ticketing.PaymentAccount{OrganizerID: "org_bank", Acquirer: ticketing.AcquirerTBank, TerminalKey: "TixApiDEMO", Taxation: "osn", VAT: "none"}
	aad := payment.PasswordAAD(&acct)
	if acct.SealedPassword, err = box.Seal("api-terminal-pw", aad); err != nil {
		t.Fatal(err)
	}
	if err := h.st.Payments.PutPaymentAccount(context.Background(), acct); err != nil {
		t.Fatal(err)
	}
	notes := &payment.TBankNotifications{
		Account: func(ctx context.Context, key string) (*ticketing.PaymentAccount, error) {
			return h.st.Payments.PaymentAccountByTerminal(ctx, ticketing.AcquirerTBank, key)
		},
		Password: func(a *ticketing.PaymentAccount) (string, error) { return box.Open(a.SealedPassword, aad) },
	}
	var applied []ticketing.PaymentUpdate
	h.srv.PaymentNotification = func(ctx context.Context, body []byte) error {
		u, err := notes.Parse(ctx, body)
		if err == nil {
			applied = append(applied, u)
		}
		return err
	}
	body := `{"TerminalKey":"TixApiDEMO","OrderId":"ord_unknown","Success":true,"Status":"CONFIRMED","PaymentId":42,"ErrorCode":"0","Amount":100,"NewField":"x"}`
	forged, _ := tbank.SignNotification([]byte(body), "wrong-password")
	wantError(t, h.do("POST", "/v1/payment-notifications/tbank", string(forged)), http.StatusForbidden, "forbidden", "")
	wantError(t, h.do("POST", "/v1/payment-notifications/tbank", body), http.StatusForbidden, "forbidden", "")
	if len(applied) != 0 {
		t.Fatalf("forged notifications were applied: %+v", applied)
	}
	genuine, _ := tbank.SignNotification([]byte(body), "api-terminal-pw")
	r := h.do("POST", "/v1/payment-notifications/tbank", string(genuine))
	wantStatus(t, r, http.StatusOK)
	if string(r.body) != "OK" {
		t.Fatalf("body %q, want OK", r.body)
	}
	want := ticketing.PaymentUpdate{OrganizerID: "org_bank", OrderID: "ord_unknown", PaymentID: "42", Amount: 100, Status: ticketing.PaymentPaid}
	if len(applied) != 1 || applied[0] != want {
		t.Fatalf("applied %+v, want %+v", applied, want)
	}
}
