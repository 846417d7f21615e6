package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"tix/internal/config"
	"tix/internal/dashboard/account"
	"tix/internal/payment"
	"tix/internal/payment/tbanksim"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The bank simulator's terminals in these tests.
const (
	terminalA  = "OrgDashDEMO"
	terminalB  = "OrgDashTWO"
	terminalPW = "terminal-password-1"
)

// bankHarness is a harness whose TIX_TBANK_API_URL is a T-Bank simulator
// (the bank's wire protocol) with two terminals.
func bankHarness(t *testing.T) *harness {
	t.Helper()
	sim := tbanksim.New(tbanksim.Options{})
	sim.AddTerminal(terminalA, terminalPW)
	sim.AddTerminal(terminalB, terminalPW)
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	return newHarness(t, nil, map[string]string{"TIX_TBANK_API_URL": srv.URL})
}

// noTerminal fails unless org has no payment account and is not verified.
func noTerminal(h *harness, id string) {
	h.t.Helper()
	if a, err := h.a.Store.Payments.GetPaymentAccount(h.ctx, id); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		h.t.Errorf("payment account %+v, %v: want none", a, err)
	}
	if org(h, id).Verified {
		h.t.Error("the organizer is verified")
	}
}

func auditActions(h *harness, org string) string {
	h.t.Helper()
	es, err := h.d.Accounts.Entries(h.ctx, org, 50)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Action)
	}
	return strings.Join(out, ",")
}

// Connecting the terminal on the Payments page checks it with the bank,
// seals the password, verifies the organizer (live keys open); a refusal
// shows the bank's reason and stores nothing; bad fields are shown inline.
func TestPayments_ConnectOpensLiveMode(t *testing.T) {
	h := bankHarness(t)
	c, o := h.owner("pay@example.com", "Pay")
	base := "/o/" + o + "/test/payments"
	if p := h.get(c, base); p.status != http.StatusOK || !strings.Contains(p.body, `name="terminal_key"`) {
		t.Fatalf("payments page: %d", p.status)
	}
	for _, tc := range []struct {
		name, key, pw string
		want          []string
	}{
		{"wrong password", terminalA, "not-the-password", []string{"<code>204</code>", "Неверные параметры.", "Банк отклонил пароль терминала"}},
		{"unknown terminal", "NoSuchDEMO", terminalPW, []string{"<code>501</code>", "Терминал не найден.", "Банк не знает такой ключ"}},
	} {
		p := h.post(c, base+"/terminal", "terminal_key", tc.key, "password", tc.pw, "taxation", "osn", "vat", "vat20")
		if p.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d", tc.name, p.status)
		}
		for _, w := range tc.want {
			if !strings.Contains(p.body, w) {
				t.Errorf("%s: the page lacks %q", tc.name, w)
			}
		}
		if strings.Contains(p.body, tc.pw) {
			t.Errorf("%s: the page shows the password", tc.name)
		}
		noTerminal(h, o)
	}
	for _, tc := range []struct{ field, key, pw, tax, vat string }{
		{"terminal_key", "", terminalPW, "osn", "none"},
		{"terminal_key", "has space", terminalPW, "osn", "none"},
		{"password", terminalA, " ", "osn", "none"},
		{"taxation", terminalA, terminalPW, "simplified", "none"},
		{"vat", terminalA, terminalPW, "osn", "18"},
	} {
		p := h.post(c, base+"/terminal", "terminal_key", tc.key, "password", tc.pw, "taxation", tc.tax, "vat", tc.vat)
		if p.status != http.StatusBadRequest || strings.Count(p.body, `class="field-error"`) != 1 || !strings.Contains(p.body, `aria-invalid="true"`) {
			t.Errorf("%s %q: %d, want 400 with one inline error", tc.field, tc.key+tc.tax+tc.vat, p.status)
		}
		noTerminal(h, o)
	}
	if p := h.post(c, "/o/"+o+"/live/keys", "type", "sk"); p.status != http.StatusConflict {
		t.Fatalf("live key before connecting: %d", p.status)
	}

	p := h.post(c, base+"/terminal", "terminal_key", terminalA, "password", terminalPW, "taxation", "usn_income", "vat", "none")
	if p.status != http.StatusOK || !strings.Contains(p.body, terminalA) {
		t.Fatalf("connect: %d %s", p.status, p.body)
	}
	a, err := h.a.Store.Payments.GetPaymentAccount(h.ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	box, err := webhook.NewAESBox(config.LocalKeyring)
	if err != nil {
		t.Fatal(err)
	}
	if pw, err := box.Open(a.SealedPassword, payment.PasswordAAD(a)); err != nil || pw != terminalPW {
		t.Errorf("the sealed password opens to %q, %v", pw, err)
	}
	if a.TerminalKey != terminalA || a.Taxation != "usn_income" || a.VAT != "none" || a.CheckedAt.IsZero() {
		t.Errorf("account %+v", a)
	}
	if !org(h, o).Verified {
		t.Fatal("the organizer is not verified after connecting its terminal")
	}
	page := h.get(c, base)
	if strings.Contains(page.body, terminalPW) || strings.Contains(page.body, a.SealedPassword) {
		t.Error("the page shows the password or its sealed form")
	}
	// Live mode is open: a live secret key is created.
	if p := h.post(c, "/o/"+o+"/live/keys", "type", "sk"); p.status != http.StatusCreated || !strings.Contains(p.body, "sk_live_") {
		t.Fatalf("live key after connecting: %d", p.status)
	}

	// Replacing the terminal keeps the receipt settings; a refused
	// replacement leaves the connected one as it was.
	if p := h.post(c, base+"/terminal", "terminal_key", terminalB, "password", "wrong-one"); p.status != http.StatusUnprocessableEntity {
		t.Errorf("refused replacement: %d", p.status)
	}
	if a2, _ := h.a.Store.Payments.GetPaymentAccount(h.ctx, o); a2.TerminalKey != terminalA || a2.SealedPassword != a.SealedPassword {
		t.Errorf("a refused replacement changed the account: %+v", a2)
	}
	if p := h.post(c, base+"/terminal", "terminal_key", terminalB, "password", terminalPW); p.status != http.StatusOK {
		t.Fatalf("replace: %d", p.status)
	}
	if a2, _ := h.a.Store.Payments.GetPaymentAccount(h.ctx, o); a2.TerminalKey != terminalB || a2.Taxation != "usn_income" || a2.VAT != "none" {
		t.Errorf("after the replacement %+v", a2)
	}

	// Receipt settings.
	if p := h.post(c, base+"/receipts", "taxation", "patent", "vat", "vat99"); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="pay-vat-err"`) {
		t.Errorf("bad VAT: %d", p.status)
	}
	if p := h.post(c, base+"/receipts", "taxation", "patent", "vat", "vat22"); p.status != http.StatusOK {
		t.Errorf("receipts: %d", p.status)
	}
	if a2, _ := h.a.Store.Payments.GetPaymentAccount(h.ctx, o); a2.Taxation != "patent" || a2.VAT != "vat22" || a2.TerminalKey != terminalB {
		t.Errorf("after the receipt settings %+v", a2)
	}
	want := "payments.receipts,payments.connect,payments.connect_refused,key.create,payments.connect,payments.connect_refused,payments.connect_refused,account.signin,account.signup"
	if got := auditActions(h, o); got != want {
		t.Errorf("audit log %s\nwant %s", got, want)
	}
}

// Receipt settings before any terminal: the page says to connect first.
func TestPayments_ReceiptsNeedATerminal(t *testing.T) {
	h := bankHarness(t)
	c, o := h.owner("first@example.com", "First")
	if p := h.post(c, "/o/"+o+"/test/payments/receipts", "taxation", "osn", "vat", "none"); p.status != http.StatusConflict {
		t.Errorf("receipts without a terminal: %d", p.status)
	}
	noTerminal(h, o)
}

// A terminal another organizer connected is refused (one terminal serves
// one organizer), and changes nothing of either.
func TestPayments_TerminalOfAnotherOrganizer(t *testing.T) {
	h := bankHarness(t)
	ca, oa := h.owner("a-pay@example.com", "A")
	cb, ob := h.owner("b-pay@example.com", "B")
	if p := h.post(ca, "/o/"+oa+"/test/payments/terminal", "terminal_key", terminalA, "password", terminalPW, "taxation", "osn", "vat", "none"); p.status != http.StatusOK {
		t.Fatalf("A connects: %d", p.status)
	}
	p := h.post(cb, "/o/"+ob+"/test/payments/terminal", "terminal_key", terminalA, "password", terminalPW, "taxation", "osn", "vat", "none")
	if p.status != http.StatusConflict || !strings.Contains(p.body, `id="pay-key-err"`) {
		t.Errorf("B connects A's terminal: %d", p.status)
	}
	noTerminal(h, ob)
}

// Two organizers connecting one terminal at the same moment: exactly one
// gets it (the store's conditional transaction), the other is refused and
// stays unverified.
func TestPayments_ConcurrentConnectsOneWinner(t *testing.T) {
	h := bankHarness(t)
	type owner struct {
		c   *http.Client
		org string
	}
	var owners []owner
	for _, addr := range []string{"race-a@example.com", "race-b@example.com", "race-c@example.com"} {
		c, o := h.owner(addr, addr)
		owners = append(owners, owner{c, o})
	}
	statuses := make([]int, len(owners))
	var wg sync.WaitGroup
	for i, ow := range owners {
		wg.Go(func() {
			statuses[i] = h.post(ow.c, "/o/"+ow.org+"/test/payments/terminal", "terminal_key", terminalA, "password", terminalPW,
				"taxation", "osn", "vat", "none").status
		})
	}
	wg.Wait()
	winners := 0
	for i, st := range statuses {
		switch st {
		case http.StatusOK:
			winners++
			if a, err := h.a.Store.Payments.PaymentAccountByTerminal(h.ctx, ticketing.AcquirerTBank, terminalA); err != nil || a.OrganizerID != owners[i].org {
				t.Errorf("the terminal's account %+v, %v: want the winner %s's", a, err, owners[i].org)
			}
		case http.StatusConflict:
			noTerminal(h, owners[i].org)
		default:
			t.Errorf("connect %d: %d", i, st)
		}
	}
	if winners != 1 {
		t.Errorf("%d organizers connected the terminal (%v), want 1", winners, statuses)
	}
}

// Only owners reach the Payments page: developer, support and viewer get
// 403; a member of another organizer gets 404; nothing changes.
func TestPayments_Roles(t *testing.T) {
	h := bankHarness(t)
	_, o := h.owner("boss-pay@example.com", "Roles")
	other, _ := h.owner("other-pay@example.com", "Other")
	base := "/o/" + o + "/test/payments"
	form := []string{"terminal_key", terminalA, "password", terminalPW, "taxation", "osn", "vat", "none"}
	check := func(who string, c *http.Client, want int) {
		if p := h.get(c, base); p.status != want {
			t.Errorf("%s GET payments: %d, want %d", who, p.status, want)
		}
		for _, path := range []string{base + "/terminal", base + "/receipts"} {
			if p := h.post(c, path, form...); p.status != want {
				t.Errorf("%s POST %s: %d, want %d", who, path, p.status, want)
			}
		}
	}
	for _, role := range []account.Role{account.Developer, account.Support, account.Viewer} {
		c := h.member(o, string(role)+"-pay@example.com", role)
		check(string(role), c, http.StatusForbidden)
		if p := h.get(c, "/o/"+o+"/test/"); strings.Contains(p.body, "/payments\"") {
			t.Errorf("%s sees the Payments link", role)
		}
	}
	check("another organizer's owner", other, http.StatusNotFound)
	noTerminal(h, o)
}
