package payment_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tix/internal/config"
	"tix/internal/payment"
	"tix/internal/payment/tbanksim"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// accounts records the accounts stored.
type accounts struct{ put []ticketing.PaymentAccount }

func (a *accounts) PutPaymentAccount(_ context.Context, acct ticketing.PaymentAccount) error {
	a.put = append(a.put, acct)
	return nil
}

func simURL(t *testing.T) string {
	t.Helper()
	sim := tbanksim.New(tbanksim.Options{})
	sim.AddTerminal("ConnDEMO", "right-password")
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	return srv.URL
}

// Connect asks the bank first: each way the bank does not confirm the
// credentials is a *CheckError of its kind with the bank's code and reason,
// and nothing is stored; confirmed ones are stored with the password
// sealed under the organizer and terminal.
func TestTerminals_ConnectChecksWithTheBank(t *testing.T) {
	t.Parallel()
	box, err := webhook.NewAESBox(config.LocalKeyring)
	if err != nil {
		t.Fatal(err)
	}
	dead := httptest.NewServer(nil)
	dead.Close()
	st := &accounts{}
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	bank := simURL(t)
	tm := func(url string) *payment.Terminals {
		return &payment.Terminals{Accounts: st, Box: box, BaseURL: url, Now: func() time.Time { return now }}
	}
	c := payment.Connection{OrganizerID: "org_c", TerminalKey: "ConnDEMO", Password: "right-password", Taxation: "osn", VAT: "vat20"}
	for _, tc := range []struct {
		name, url, key, pw, kind, code string
	}{
		{"wrong password", bank, "ConnDEMO", "wrong", payment.RefusedPassword, "204"},
		{"unknown terminal", bank, "NoSuchDEMO", "right-password", payment.RefusedTerminal, "501"},
		{"unreachable", dead.URL, "ConnDEMO", "right-password", payment.Unreachable, ""},
	} {
		in := c
		in.TerminalKey, in.Password = tc.key, tc.pw
		_, err := tm(tc.url).Connect(context.Background(), in)
		var ce *payment.CheckError
		if !errors.As(err, &ce) || ce.Kind != tc.kind || ce.Code != tc.code || ce.Reason == "" {
			t.Errorf("%s: %#v, want kind %s code %q", tc.name, err, tc.kind, tc.code)
		}
	}
	if len(st.put) != 0 {
		t.Fatalf("refused credentials stored %+v", st.put)
	}
	a, err := tm(bank+"/").Connect(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.put) != 1 || st.put[0] != *a || a.TerminalKey != "ConnDEMO" || a.Acquirer != ticketing.AcquirerTBank ||
		!a.CheckedAt.Equal(now) || !a.ConnectedAt.Equal(now) || a.Taxation != "osn" || a.VAT != "vat20" {
		t.Errorf("stored %+v", st.put)
	}
	if pw, err := box.Open(a.SealedPassword, payment.PasswordAAD(a)); err != nil || pw != "right-password" {
		t.Errorf("sealed password opens to %q, %v", pw, err)
	}
	if _, err := box.Open(a.SealedPassword, payment.PasswordAAD(&ticketing.PaymentAccount{OrganizerID: "org_x", Acquirer: a.Acquirer, TerminalKey: a.TerminalKey})); err == nil {
		t.Error("the sealed password opens for another organizer")
	}
}

// Fields not worth asking the bank about are refused naming the field.
func TestCheckConnection_NamesTheField(t *testing.T) {
	t.Parallel()
	ok := payment.Connection{OrganizerID: "org_c", TerminalKey: "ConnDEMO", Password: "pw", Taxation: "osn", VAT: "none"}
	if err := payment.CheckConnection(ok); err != nil {
		t.Fatal(err)
	}
	for field, change := range map[string]func(*payment.Connection){
		"terminal_key": func(c *payment.Connection) { c.TerminalKey = "two words" },
		"password":     func(c *payment.Connection) { c.Password = strings.Repeat("p", payment.MaxTerminalPassword+1) },
		"taxation":     func(c *payment.Connection) { c.Taxation = "" },
		"vat":          func(c *payment.Connection) { c.VAT = "vat18" },
	} {
		c := ok
		change(&c)
		var te *ticketing.Error
		if err := payment.CheckConnection(c); !errors.As(err, &te) || te.Code != ticketing.CodeInvalidRequest || te.Param != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}
