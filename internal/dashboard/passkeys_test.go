package dashboard_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/dashboard"
)

// postJSON posts a raw JSON body, as the passkey script does.
func (h *harness) postJSON(c *http.Client, path, body string) page {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.ctx, http.MethodPost, h.url(path), strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// passkeyOrigin is the origin passkeys are used from on the harness: its
// public URL is http://127.0.0.1:<port>, so the relying party is localhost.
func (h *harness) passkeyOrigin() string { return "http://localhost:" + mustURL(h.srv.URL).Port() }

func (h *harness) softKey() *softKey { return newSoftKey(h.t, "localhost", h.passkeyOrigin()) }

// addPasskey runs both steps of adding k as name on the signed-in client c.
func (h *harness) addPasskey(c *http.Client, k *softKey, name string) page {
	h.t.Helper()
	p := h.post(c, "/passkeys/add/begin", "name", name)
	if p.status != http.StatusOK {
		h.t.Fatalf("add begin: %d %s", p.status, p.body)
	}
	return h.postJSON(c, "/passkeys/add/finish", k.create(h.t, p.body))
}

// beginPasskeySignIn starts a sign-in on c and returns the options' body.
func (h *harness) beginPasskeySignIn(c *http.Client) string {
	h.t.Helper()
	p := h.post(c, "/passkeys/signin/begin")
	if p.status != http.StatusOK {
		h.t.Fatalf("sign-in begin: %d %s", p.status, p.body)
	}
	return p.body
}

func (h *harness) passkeySignIn(c *http.Client, k *softKey) page {
	h.t.Helper()
	return h.postJSON(c, "/passkeys/signin/finish", k.get(h.t, h.beginPasskeySignIn(c)))
}

func reply(t *testing.T, p page) (redirect, msg string) {
	t.Helper()
	var r struct{ Redirect, Error string }
	if err := json.Unmarshal([]byte(p.body), &r); err != nil {
		t.Fatalf("not the passkey script's JSON: %d %s", p.status, p.body)
	}
	return r.Redirect, r.Error
}

// An owner adds a passkey (discoverable, user verification required, the
// relying party localhost for the loopback public URL), signs in with it
// in a browser that had no session (a new session, the counter moved
// forward with the audit log saying how), and removes it: then it no
// longer signs in.
func TestPasskey_AddSignInRemove(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, org := h.owner("keys@example.com", "Keys")
	if p := h.get(c, "/account/passkeys"); p.status != http.StatusOK || !strings.Contains(p.body, `id="no-passkeys"`) ||
		!strings.Contains(p.body, `data-origins="`+h.passkeyOrigin()+`"`) {
		t.Fatalf("passkeys page: %d %s", p.status, p.body)
	}
	begin := h.post(c, "/passkeys/add/begin", "name", "  Work   laptop ")
	var opts struct {
		PublicKey struct {
			RP                     struct{ ID string }
			AuthenticatorSelection struct{ ResidentKey, UserVerification string }
		}
	}
	if err := json.Unmarshal([]byte(begin.body), &opts); err != nil || opts.PublicKey.RP.ID != "localhost" ||
		opts.PublicKey.AuthenticatorSelection.ResidentKey != "required" || opts.PublicKey.AuthenticatorSelection.UserVerification != "required" {
		t.Fatalf("creation options %s (%v): want rp localhost, a resident key and user verification", begin.body, err)
	}
	k := h.softKey()
	p := h.postJSON(c, "/passkeys/add/finish", k.create(t, begin.body))
	if to, _ := reply(t, p); p.status != http.StatusOK || to != h.d.Settings.Path+"/account/passkeys?done=added" {
		t.Fatalf("add finish: %d %s", p.status, p.body)
	}
	if p := h.get(c, "/account/passkeys"); !strings.Contains(p.body, "<td>Work laptop</td>") || !strings.Contains(p.body, "&#43;05") {
		t.Errorf("the page does not list the passkey with the organizer's time (Yekaterinburg, +05):\n%s", p.body)
	}

	b := h.client()
	p = h.passkeySignIn(b, k)
	if to, _ := reply(t, p); p.status != http.StatusOK || to != h.d.Settings.Path+"/" {
		t.Fatalf("passkey sign-in: %d %s", p.status, p.body)
	}
	if p := h.get(b, "/o/"+org+"/test/"); p.status != http.StatusOK {
		t.Fatalf("the organizer after a passkey sign-in: %d", p.status)
	}
	ps, _ := h.d.Passkeys.ListPasskeys(h.ctx, "keys@example.com")
	if len(ps) != 1 || ps[0].SignCount != 1 || ps[0].LastUsedAt == nil || ps[0].Name != "Work laptop" {
		t.Errorf("stored passkey after a sign-in: %+v", ps)
	}

	if p := h.post(c, "/account/passkeys/remove", "id", ps[0].ID); p.status != http.StatusSeeOther {
		t.Fatalf("remove: %d %s", p.status, p.body)
	}
	if p := h.passkeySignIn(h.client(), k); p.status != http.StatusUnauthorized {
		t.Errorf("sign-in with the removed passkey: %d %s, want 401", p.status, p.body)
	}
	es, _ := h.d.Accounts.Entries(h.ctx, org, 50)
	var got []string
	for _, e := range es {
		got = append(got, e.Action+" "+e.Detail)
	}
	want := []string{"passkey.remove Work laptop", "account.signin passkey Work laptop", "passkey.add Work laptop", "account.signin password"}
	if len(got) < 4 || strings.Join(got[:4], ",") != strings.Join(want, ",") {
		t.Errorf("audit log %q, want it to start with %q", got, want)
	}
}

// A forged assertion is refused: signed by another key (the attacker knows
// the credential id and user handle), for another origin or relying party,
// without user verification, or with its authenticator data changed after
// signing. None of them signs in or moves the stored counter.
func TestPasskey_ForgedAssertionRefused(t *testing.T) {
	h := newHarness(t, func(s *dashboard.Settings) { s.AccountLimit, s.SlowAfter = 100, 100 }, nil)
	c, _ := h.owner("forged@example.com", "Forged")
	k := h.softKey()
	if p := h.addPasskey(c, k, "Phone"); p.status != http.StatusOK {
		t.Fatalf("add: %d %s", p.status, p.body)
	}
	thief := h.softKey()
	forgeries := map[string]func(opts string) string{
		"another key's signature": func(opts string) string {
			return k.sign(t, thief.key, parseOptions(t, opts).PublicKey.Challenge)
		},
		"another origin": func(opts string) string {
			k.origin = "https://evil.example"
			defer func() { k.origin = h.passkeyOrigin() }()
			return k.get(t, opts)
		},
		"another relying party": func(opts string) string {
			k.rpID = "evil.example"
			defer func() { k.rpID = "localhost" }()
			return k.get(t, opts)
		},
		"no user verification": func(opts string) string {
			k.flags = flagUP
			defer func() { k.flags = flagUP | flagUV }()
			return k.get(t, opts)
		},
		"authenticator data changed after signing": func(opts string) string {
			k.tamper = true
			defer func() { k.tamper = false }()
			return k.get(t, opts)
		},
	}
	for name, forge := range forgeries {
		c := h.client()
		p := h.postJSON(c, "/passkeys/signin/finish", forge(h.beginPasskeySignIn(c)))
		if _, msg := reply(t, p); p.status != http.StatusUnauthorized || msg == "" {
			t.Errorf("%s: %d %s, want 401 with a message", name, p.status, p.body)
		}
		if ck := cookieNamed(c, h, "tix_dashboard"); ck != "" {
			t.Errorf("%s: a session cookie was set", name)
		}
	}
	ps, _ := h.d.Passkeys.ListPasskeys(h.ctx, "forged@example.com")
	if ps[0].SignCount != 0 || ps[0].LastUsedAt != nil {
		t.Errorf("the passkey after forgeries: count %d, last used %v", ps[0].SignCount, ps[0].LastUsedAt)
	}
	if p := h.passkeySignIn(h.client(), k); p.status != http.StatusOK {
		t.Errorf("the genuine key after the forgeries: %d %s", p.status, p.body)
	}
}

// cookieNamed is the value of c's cookie name for the dashboard's passkey
// paths (which get every dashboard cookie).
func cookieNamed(c *http.Client, h *harness, name string) string {
	for _, ck := range c.Jar.Cookies(mustURL(h.url("/passkeys/"))) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// A replayed assertion is refused: posted again to the ceremony it
// answered (taken: no ceremony), or to a new ceremony (another challenge).
func TestPasskey_ReplayedAssertionRefused(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, _ := h.owner("replay@example.com", "Replay")
	k := h.softKey()
	h.addPasskey(c, k, "Key")
	b := h.client()
	assertion := k.get(t, h.beginPasskeySignIn(b))
	if p := h.postJSON(b, "/passkeys/signin/finish", assertion); p.status != http.StatusOK {
		t.Fatalf("the genuine sign-in: %d %s", p.status, p.body)
	}
	if p := h.postJSON(b, "/passkeys/signin/finish", assertion); p.status != http.StatusBadRequest {
		t.Errorf("the assertion again: %d %s, want 400 (the ceremony is over)", p.status, p.body)
	}
	e := h.client()
	h.beginPasskeySignIn(e)
	if p := h.postJSON(e, "/passkeys/signin/finish", assertion); p.status != http.StatusUnauthorized {
		t.Errorf("the assertion in a new ceremony: %d %s, want 401", p.status, p.body)
	}
	if cookieNamed(e, h, "tix_dashboard") != "" {
		t.Errorf("the replay got a session")
	}
}

// A credential the dashboard never registered is refused, with the same
// answer as a bad signature.
func TestPasskey_UnknownCredentialRefused(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, _ := h.owner("known@example.com", "Known")
	h.addPasskey(c, h.softKey(), "Key")
	stranger := h.softKey()
	stranger.handle = []byte("anyone")
	p := h.passkeySignIn(h.client(), stranger)
	if _, msg := reply(t, p); p.status != http.StatusUnauthorized || !strings.Contains(msg, "ключом") {
		t.Errorf("an unknown credential: %d %s, want 401 saying the passkey failed (in Russian, the default)", p.status, p.body)
	}
	stranger.id = make([]byte, 2000) // longer than WebAuthn allows (1023 bytes): bad input, never a 500
	if p := h.passkeySignIn(h.client(), stranger); p.status != http.StatusBadRequest {
		t.Errorf("a 2000-byte credential id: %d %s, want 400", p.status, p.body)
	}
	if p := h.post(c, "/account/passkeys/remove", "id", strings.Repeat("A", 5000)); p.status != http.StatusNotFound {
		t.Errorf("removing a 5000-character id: %d, want 404", p.status)
	}
}

// A ceremony's challenge works once and only in the browser that started
// it: a copy of its cookie after it finished, a browser without the cookie,
// and a ceremony past its lifetime are refused.
func TestPasskey_ChallengeReusedOrExpiredRefused(t *testing.T) {
	h := newHarness(t, func(s *dashboard.Settings) { s.PasskeyTTL = 300 * time.Millisecond }, nil)
	c, _ := h.owner("challenge@example.com", "Challenge")
	k := h.softKey()
	if p := h.addPasskey(c, k, "Key"); p.status != http.StatusOK {
		t.Fatalf("add: %d %s", p.status, p.body)
	}
	b := h.client()
	opts := h.beginPasskeySignIn(b)
	copied := h.client()
	u := mustURL(h.url("/passkeys/"))
	copied.Jar.SetCookies(u, b.Jar.Cookies(u))
	if p := h.postJSON(b, "/passkeys/signin/finish", k.get(t, opts)); p.status != http.StatusOK {
		t.Fatalf("the first answer: %d %s", p.status, p.body)
	}
	if p := h.postJSON(copied, "/passkeys/signin/finish", k.get(t, opts)); p.status != http.StatusBadRequest {
		t.Errorf("the same challenge again with a copy of the cookie: %d %s, want 400", p.status, p.body)
	}
	opts = h.beginPasskeySignIn(h.client())
	if p := h.postJSON(h.client(), "/passkeys/signin/finish", k.get(t, opts)); p.status != http.StatusBadRequest {
		t.Errorf("another browser answering the challenge: %d %s, want 400", p.status, p.body)
	}
	late := h.client()
	opts = h.beginPasskeySignIn(late)
	time.Sleep(400 * time.Millisecond)
	p := h.postJSON(late, "/passkeys/signin/finish", k.get(t, opts))
	if _, msg := reply(t, p); p.status != http.StatusBadRequest || msg == "" {
		t.Errorf("an expired ceremony: %d %s, want 400 saying to press the button again", p.status, p.body)
	}
	if cookieNamed(late, h, "tix_dashboard") != "" || cookieNamed(copied, h, "tix_dashboard") != "" {
		t.Errorf("a refused ceremony got a session")
	}
}

// The sign count must move forward: an assertion from a clone of the key
// (a count not above the stored one) is refused, and of clones racing with
// the same count exactly one signs in (the conditional write).
func TestPasskey_SignCountClonesRefused(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, _ := h.owner("clone@example.com", "Clone")
	k := h.softKey()
	h.addPasskey(c, k, "Key")
	const n = 6
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		b := h.client()
		opts := h.beginPasskeySignIn(b)
		clone := *k // each clone signs with count 1
		wg.Go(func() {
			p := h.postJSON(b, "/passkeys/signin/finish", clone.get(t, opts))
			mu.Lock()
			statuses[p.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[http.StatusOK] != 1 || statuses[http.StatusUnauthorized] != n-1 {
		t.Errorf("clones racing with one count: %v, want one 200 and %d 401", statuses, n-1)
	}
	// k's count is still 0: its next assertion carries 1, not above the stored 1.
	if p := h.passkeySignIn(h.client(), k); p.status != http.StatusUnauthorized {
		t.Errorf("an assertion whose count did not increase: %d %s, want 401", p.status, p.body)
	}
	if p := h.passkeySignIn(h.client(), k); p.status != http.StatusOK {
		t.Errorf("the next count: %d %s", p.status, p.body)
	}
}

// Passkey sign-in attempts count on the account's and the client's
// sign-in budgets: past the account's limit even the genuine key is
// refused (429 with Retry-After) until the window ends.
func TestPasskey_SignInCountsOnTheBudgets(t *testing.T) {
	h := newHarness(t, func(s *dashboard.Settings) { s.SlowAfter, s.AccountLimit, s.ClientLimit = 100, 3, 100 }, nil)
	c, _ := h.owner("budget@example.com", "Budget") // one attempt: the password sign-in
	k := h.softKey()
	h.addPasskey(c, k, "Key")
	thief := h.softKey()
	for i := range 2 {
		b := h.client()
		p := h.postJSON(b, "/passkeys/signin/finish", k.sign(t, thief.key, parseOptions(t, h.beginPasskeySignIn(b)).PublicKey.Challenge))
		if p.status != http.StatusUnauthorized {
			t.Fatalf("forgery %d: %d", i+1, p.status)
		}
	}
	p := h.passkeySignIn(h.client(), k)
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Errorf("the genuine key past the account's limit: %d (Retry-After %q), want 429", p.status, p.header.Get("Retry-After"))
	}
}

// Adding a passkey is bound to the signed-in account: a ceremony begun by
// one account cannot be finished under another's session, nor signed out.
func TestPasskey_AddBoundToTheAccount(t *testing.T) {
	h := newHarness(t, nil, nil)
	a, _ := h.owner("a-keys@example.com", "A")
	bc, _ := h.owner("b-keys@example.com", "B")
	begin := h.post(a, "/passkeys/add/begin", "name", "A's key")
	u := mustURL(h.url("/passkeys/"))
	bc.Jar.SetCookies(u, []*http.Cookie{{Name: "tix_passkey", Value: cookieNamed(a, h, "tix_passkey"), Path: "/dashboard/passkeys/"}})
	k := h.softKey()
	if p := h.postJSON(bc, "/passkeys/add/finish", k.create(t, begin.body)); p.status != http.StatusBadRequest {
		t.Errorf("B finishing A's ceremony: %d %s, want 400", p.status, p.body)
	}
	if p := h.postJSON(h.client(), "/passkeys/add/finish", k.create(t, begin.body)); p.status != http.StatusUnauthorized {
		t.Errorf("finishing signed out: %d, want 401", p.status)
	}
	for _, who := range []string{"a-keys@example.com", "b-keys@example.com"} {
		if ps, _ := h.d.Passkeys.ListPasskeys(h.ctx, who); len(ps) != 0 {
			t.Errorf("%s has %d passkeys, want none", who, len(ps))
		}
	}
	if p := h.post(a, "/passkeys/add/begin", "name", strings.Repeat("x", 61)); p.status != http.StatusBadRequest {
		t.Errorf("a 61-character name: %d", p.status)
	}
	if p := h.post(a, "/passkeys/add/begin", "name", "  "); p.status != http.StatusBadRequest {
		t.Errorf("a blank name: %d", p.status)
	}
	// B cannot remove A's passkey.
	if p := h.addPasskey(a, k, "A's key"); p.status != http.StatusOK {
		t.Fatalf("add: %d %s", p.status, p.body)
	}
	ps, _ := h.d.Passkeys.ListPasskeys(h.ctx, "a-keys@example.com")
	if p := h.post(bc, "/account/passkeys/remove", "id", ps[0].ID); p.status != http.StatusNotFound {
		t.Errorf("B removing A's passkey: %d, want 404", p.status)
	}
	if ps, _ := h.d.Passkeys.ListPasskeys(h.ctx, "a-keys@example.com"); len(ps) != 1 {
		t.Errorf("A's passkeys after B's attempt: %+v", ps)
	}
	// The same authenticator again is excluded by the options, and refused if it answers anyway.
	begin = h.post(a, "/passkeys/add/begin", "name", "Again")
	if !strings.Contains(begin.body, `"excludeCredentials":[{"type":"public-key","id":"`+ps[0].ID+`"`) {
		t.Errorf("the options do not exclude the passkey %s: %s", ps[0].ID, begin.body)
	}
	if p := h.postJSON(a, "/passkeys/add/finish", k.create(t, begin.body)); p.status != http.StatusConflict {
		t.Errorf("the same credential again: %d %s, want 409", p.status, p.body)
	}
}

// A public URL on an IP address other than loopback has no relying party
// (browsers refuse IP addresses): passkeys are off, the sign-in page does
// not offer them and their routes are not found.
func TestPasskey_OffWithoutARelyingParty(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.d.Settings.PublicURL = "http://192.0.2.10:8080"
	off := httptest.NewServer(h.d.Handler())
	t.Cleanup(off.Close)
	srv := off.URL
	c := h.client()
	p := h.do(c, http.MethodGet, srv+"/dashboard/signin", nil)
	if p.status != http.StatusOK || strings.Contains(p.body, "passkey") {
		t.Errorf("sign-in page without passkeys: %d %s", p.status, p.body)
	}
	if p := h.do(c, http.MethodPost, srv+"/dashboard/passkeys/signin/begin", nil); p.status != http.StatusNotFound {
		t.Errorf("passkey sign-in without passkeys: %d", p.status)
	}
}

// A passkey sign-in rotates the session as a password sign-in does: a
// session id planted in the browser before (another account's) is ended,
// and the signed-in id is a new one.
func TestPasskey_SignInRotatesAPlantedSession(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, _ := h.owner("rotate@example.com", "Rotate")
	k := h.softKey()
	h.addPasskey(c, k, "Key")
	attacker, attackerOrg := h.owner("planter@example.com", "Planter")
	victim := h.client()
	u := mustURL(h.srv.URL + "/")
	planted := cookieNamed(attacker, h, "tix_dashboard")
	victim.Jar.SetCookies(u, []*http.Cookie{{Name: "tix_dashboard", Value: planted, Path: "/"}})
	if p := h.passkeySignIn(victim, k); p.status != http.StatusOK {
		t.Fatalf("passkey sign-in: %d %s", p.status, p.body)
	}
	if got := cookieNamed(victim, h, "tix_dashboard"); got == "" || got == planted {
		t.Errorf("the session id after a passkey sign-in is the planted one (or none)")
	}
	if p := h.get(attacker, "/o/"+attackerOrg+"/test/"); p.status != http.StatusSeeOther {
		t.Errorf("the planted session after the victim's passkey sign-in: %d, want ended (a redirect to sign in)", p.status)
	}
}
