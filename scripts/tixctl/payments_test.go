package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"tix/internal/config"
	"tix/internal/payment"
	"tix/internal/payment/tbanksim"
	"tix/internal/store"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// bankSim is a T-Bank simulator with one terminal, served over HTTP.
func bankSim(t *testing.T, key, password string) string {
	t.Helper()
	sim := tbanksim.New(tbanksim.Options{})
	sim.AddTerminal(key, password)
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	return srv.URL
}

// runIn runs tixctl with stdin.
func (c *cli) runIn(stdin string, args ...string) (int, string, string) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	code := newApp(&out, &errOut, strings.NewReader(stdin)).run(append(append([]string{}, c.base...), args...))
	return code, out.String(), errOut.String()
}

// noAccount fails unless org has no payment account and is not verified.
func noAccount(t *testing.T, st *store.Store, org string) {
	t.Helper()
	ctx := context.Background()
	if a, err := st.Payments.GetPaymentAccount(ctx, org); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Errorf("payment account of %s = %+v, %v: want none stored", org, a, err)
	}
	if o, err := st.Organizers.GetOrganizer(ctx, org); err != nil || o.Verified {
		t.Errorf("organizer %s = %+v, %v: want it not verified", org, o, err)
	}
}

var accountKeys = []string{"acquirer", "checked_at", "connected_at", "organizer_id", "taxation", "terminal_key", "vat", "verified"}

func TestConnectTBank_ChecksWithTheBankSealsAndVerifies(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()
	bank := bankSim(t, "OrgTestDEMO", "right-password")
	c.json(0, &ticketing.Organizer{}, "organizers", "create", "--name", "Pay Org", "--id", "org_pay")
	pwFile := writeFile(t, "pw", "  right-password\n")

	var got map[string]any
	c.json(0, &got, "organizers", "connect-tbank", "--id", "org_pay", "--terminal-key", "OrgTestDEMO",
		"--password-file", pwFile, "--api-url", bank, "--taxation", "usn_income", "--vat", "none")
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, accountKeys) {
		t.Errorf("--json keys %v, want %v", keys, accountKeys)
	}
	if got["terminal_key"] != "OrgTestDEMO" || got["acquirer"] != "tbank" || got["taxation"] != "usn_income" ||
		got["vat"] != "none" || got["verified"] != true || got["organizer_id"] != "org_pay" {
		t.Errorf("output %v", got)
	}
	a, err := st.Payments.GetPaymentAccount(ctx, "org_pay")
	if err != nil {
		t.Fatal(err)
	}
	box, err := webhook.NewAESBox(config.LocalKeyring)
	if err != nil {
		t.Fatal(err)
	}
	if pw, err := box.Open(a.SealedPassword, payment.PasswordAAD(a)); err != nil || pw != "right-password" {
		t.Errorf("the sealed password opens to %q, %v: want the trimmed password", pw, err)
	}
	if a.ConnectedAt.IsZero() || a.CheckedAt.IsZero() || a.Acquirer != ticketing.AcquirerTBank {
		t.Errorf("account %+v", a)
	}
	if o, _ := st.Organizers.GetOrganizer(ctx, "org_pay"); !o.Verified {
		t.Error("the organizer is not verified after connecting its terminal")
	}

	// Reconnecting (password from stdin) without receipt flags keeps the settings.
	code, out, errOut := c.runIn("right-password\n", "organizers", "connect-tbank", "--id", "org_pay",
		"--terminal-key", "OrgTestDEMO", "--password-stdin", "--api-url", bank)
	if code != 0 || !strings.Contains(out, "Connected T-Bank terminal OrgTestDEMO") || !strings.Contains(out, "taxation usn_income, VAT none") {
		t.Fatalf("reconnect: exit %d\n%s%s", code, out, errOut)
	}
	for _, s := range []string{out, errOut} {
		if strings.Contains(s, "right-password") || strings.Contains(s, a.SealedPassword) || strings.Contains(s, "v1.") {
			t.Errorf("the output shows the password or its sealed form:\n%s", s)
		}
	}
}

func TestConnectTBank_RefusedCredentialsStoreNothing(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	bank := bankSim(t, "OrgTestDEMO", "right-password")
	c.json(0, &ticketing.Organizer{}, "organizers", "create", "--name", "Pay Org", "--id", "org_bad")
	dead := httptest.NewServer(nil)
	deadURL := dead.URL
	dead.Close()
	for _, tc := range []struct {
		name, key, password, url, want string
	}{
		{"wrong password", "OrgTestDEMO", "wrong-password", bank, "wrong password (error 204"},
		{"unknown terminal", "NoSuchDEMO", "right-password", bank, "does not know terminal NoSuchDEMO (error 501"},
		{"bank unreachable", "OrgTestDEMO", "right-password", deadURL, "could not reach T-Bank at " + deadURL},
	} {
		code, out, errOut := c.runIn(tc.password, "organizers", "connect-tbank", "--id", "org_bad", "--terminal-key", tc.key,
			"--password-stdin", "--api-url", tc.url, "--taxation", "osn", "--vat", "vat20")
		if code != 1 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "nothing was stored") {
			t.Errorf("%s: exit %d, stderr %q: want 1 and %q, nothing was stored", tc.name, code, errOut, tc.want)
		}
		if strings.Contains(out+errOut, tc.password) {
			t.Errorf("%s: the output shows the password", tc.name)
		}
		noAccount(t, st, "org_bad")
	}
	var e cliError
	c.json(1, &e, "organizers", "connect-tbank", "--id", "org_missing", "--terminal-key", "OrgTestDEMO",
		"--password-file", writeFile(t, "pw", "right-password"), "--api-url", bank, "--taxation", "osn", "--vat", "none")
	if e.Error.Code != "not_found" {
		t.Errorf("unknown organizer: %+v", e)
	}
}

// A password file its group or others can read is refused before the bank is
// asked or anything is stored, saying its mode and the chmod that fixes it.
func TestConnectTBank_RefusesAPasswordFileOthersCanRead(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	bank := bankSim(t, "OrgTestDEMO", "right-password")
	c.json(0, &ticketing.Organizer{}, "organizers", "create", "--name", "Pay Org", "--id", "org_perm")
	pwFile := writeFile(t, "pw", "right-password")
	connect := func() (int, string, string) {
		return c.runIn("", "organizers", "connect-tbank", "--id", "org_perm", "--terminal-key", "OrgTestDEMO",
			"--password-file", pwFile, "--api-url", bank, "--taxation", "osn", "--vat", "none")
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		if err := os.Chmod(pwFile, mode); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := connect()
		want := fmt.Sprintf("has mode %04o", mode)
		if code != 2 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "chmod 600 "+pwFile) {
			t.Errorf("mode %04o: exit %d, stderr %q: want 2, %q and chmod 600 %s", mode, code, errOut, want, pwFile)
		}
		if strings.Contains(out+errOut, "right-password") {
			t.Errorf("mode %04o: the output shows the password", mode)
		}
		noAccount(t, st, "org_perm")
	}
	if err := os.Chmod(pwFile, 0o400); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := connect(); code != 0 {
		t.Fatalf("mode 0400: exit %d\n%s%s", code, out, errOut)
	}
}

func TestConnectTBank_Usage(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	bank := bankSim(t, "OrgTestDEMO", "right-password")
	c.json(0, &ticketing.Organizer{}, "organizers", "create", "--name", "Pay Org", "--id", "org_use")
	pw := writeFile(t, "pw", "right-password")
	base := []string{"organizers", "connect-tbank", "--id", "org_use", "--terminal-key", "OrgTestDEMO", "--api-url", bank}
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"--password", "right-password", "--taxation", "osn", "--vat", "none"}, "", "flag provided but not defined: -password"},
		{[]string{"--password-file", pw, "right-password", "--taxation", "osn", "--vat", "none"}, "", "never from the command line"},
		{[]string{"--taxation", "osn", "--vat", "none"}, "right-password", "exactly one of --password-file FILE or --password-stdin"},
		{[]string{"--password-file", pw, "--password-stdin", "--taxation", "osn", "--vat", "none"}, "right-password", "exactly one of"},
		{[]string{"--password-stdin", "--taxation", "osn", "--vat", "none"}, "  \n", "is empty"},
		{[]string{"--password-file", pw}, "", "--taxation and --vat are required"},
		{[]string{"--password-file", pw, "--taxation", "osn"}, "", "--taxation and --vat are required"},
		{[]string{"--password-file", pw, "--taxation", "simplified", "--vat", "none"}, "", "--taxation must be one of osn, usn_income"},
		{[]string{"--password-file", pw, "--taxation", "osn", "--vat", "18"}, "", "--vat must be one of none, vat0"},
	} {
		code, _, errOut := c.runIn(tc.stdin, append(append([]string{}, base...), tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q: want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	noAccount(t, st, "org_use")
}

func TestReceiptSettingsAndOrganizersShow(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()
	bank := bankSim(t, "OrgTestDEMO", "right-password")
	c.json(0, &ticketing.Organizer{}, "organizers", "create", "--name", "Pay Org", "--id", "org_rs")

	var shown map[string]any
	c.json(0, &shown, "organizers", "show", "--id", "org_rs")
	if shown["payment_account"] != nil || shown["id"] != "org_rs" || shown["verified"] != false {
		t.Errorf("show without an account: %v", shown)
	}
	code, _, errOut := c.run("organizers", "receipt-settings", "--id", "org_rs", "--taxation", "osn", "--vat", "vat20")
	if code != 1 || !strings.Contains(errOut, "no T-Bank terminal connected") || !strings.Contains(errOut, "connect-tbank --id org_rs") {
		t.Errorf("receipt-settings before connecting: exit %d, %q", code, errOut)
	}
	code, _, errOut = c.run("organizers", "receipt-settings", "--id", "org_rs", "--taxation", "osn")
	if code != 2 || !strings.Contains(errOut, "--vat must be one of") {
		t.Errorf("receipt-settings without --vat: exit %d, %q", code, errOut)
	}

	c.json(0, &map[string]any{}, "organizers", "connect-tbank", "--id", "org_rs", "--terminal-key", "OrgTestDEMO",
		"--password-file", writeFile(t, "pw", "right-password"), "--api-url", bank, "--taxation", "osn", "--vat", "none")
	before, _ := st.Payments.GetPaymentAccount(ctx, "org_rs")
	// An operator's unverify stands: changing the receipts does not verify again.
	if code, _, errOut := c.run("organizers", "verify", "--id", "org_rs", "--unverify"); code != 0 {
		t.Fatal(errOut)
	}
	var got map[string]any
	c.json(0, &got, "organizers", "receipt-settings", "--id", "org_rs", "--taxation", "patent", "--vat", "vat22")
	if got["taxation"] != "patent" || got["vat"] != "vat22" || got["verified"] != false || got["terminal_key"] != "OrgTestDEMO" {
		t.Errorf("receipt-settings output %v", got)
	}
	after, err := st.Payments.GetPaymentAccount(ctx, "org_rs")
	if err != nil || after.Taxation != "patent" || after.VAT != "vat22" || after.SealedPassword != before.SealedPassword {
		t.Errorf("account after receipt-settings %+v, %v", after, err)
	}

	c.json(0, &shown, "organizers", "show", "--id", "org_rs")
	acct, _ := shown["payment_account"].(map[string]any)
	var keys []string
	for k := range acct {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"acquirer", "checked_at", "connected_at", "organizer_id", "taxation", "terminal_key", "vat"}; !slices.Equal(keys, want) {
		t.Errorf("show: payment_account keys %v, want %v", keys, want)
	}
	raw, _ := json.Marshal(shown)
	if strings.Contains(string(raw), "sealed") || strings.Contains(string(raw), after.SealedPassword) {
		t.Errorf("show prints the sealed password: %s", raw)
	}
	code, out, _ := c.run("organizers", "show", "--id", "org_rs")
	if code != 0 || !strings.Contains(out, "tbank terminal OrgTestDEMO") || !strings.Contains(out, "taxation patent, VAT vat22") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
	var e cliError
	c.json(1, &e, "organizers", "show", "--id", "org_nobody")
	if e.Error.Code != "not_found" {
		t.Errorf("show of an unknown organizer: %+v", e)
	}
}
