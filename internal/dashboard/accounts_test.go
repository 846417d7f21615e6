package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/dashboard"
	"tix/internal/dashboard/account"
)

// Open sign-up: the form creates an unverified-email owner of a new
// test-mode organizer; signing in is refused until the emailed link is
// opened; then the session cookie is HttpOnly, SameSite=Lax and (on plain
// local HTTP only) not Secure, and the organizer's pages show its time zone.
func TestSignUp_VerifyThenSignIn(t *testing.T) {
	h := newHarness(t, nil, nil)
	c := h.client()
	addr := "owner-" + fmt.Sprint(time.Now().UnixNano()) + "@example.com"
	p := h.post(c, "/signup", "org_name", "Kazan Jazz", "email", addr, "password", password, "time_zone", "Asia/Yekaterinburg")
	if p.status != http.StatusOK || !strings.Contains(p.body, addr) {
		t.Fatalf("sign up: %d %s", p.status, p.body)
	}
	if p := h.post(c, "/signin", "email", addr, "password", password); p.status != http.StatusForbidden {
		t.Fatalf("sign in before verifying: %d, want 403", p.status)
	}
	link := h.links.last(t, addr)
	if !strings.HasPrefix(link, h.url("/verify?t=")) {
		t.Fatalf("verification link %q", link)
	}
	if p := h.get(c, link); p.status != http.StatusOK {
		t.Fatalf("verify: %d %s", p.status, p.body)
	}
	if p := h.get(c, link); p.status != http.StatusBadRequest {
		t.Errorf("the link a second time: %d, want 400", p.status)
	}
	p = h.signIn(c, addr, password)
	var sc *http.Cookie
	for _, ck := range (&http.Response{Header: p.header}).Cookies() {
		if ck.Name == "tix_dashboard" {
			sc = ck
		}
	}
	if sc == nil || !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode || sc.Secure || sc.Path != "/" {
		t.Fatalf("session cookie %+v", sc)
	}
	ms, _ := h.d.Accounts.Memberships(h.ctx, addr)
	o := org(h, ms[0].OrganizerID)
	if o.Name != "Kazan Jazz" || o.Verified {
		t.Errorf("organizer %+v: want Kazan Jazz in test mode only", o)
	}
	if id, err := h.a.Store.Emails.GetIdentity(h.ctx, o.ID); err != nil || len(id.Contacts) != 1 || id.Contacts[0] != addr {
		t.Errorf("the new organizer's alert contacts: %+v %v, want its owner", id, err)
	}
	home := h.get(c, "/")
	if home.status != http.StatusSeeOther || home.header.Get("Location") != h.d.Settings.Path+"/o/"+o.ID+"/test/" {
		t.Fatalf("home: %d %s", home.status, home.header.Get("Location"))
	}
	ov := h.get(c, "/o/"+o.ID+"/test/")
	if ov.status != http.StatusOK || !strings.Contains(ov.body, "&#43;05") || !strings.Contains(ov.body, "Kazan Jazz") {
		t.Errorf("overview (Yekaterinburg time, +05): %d %s", ov.status, ov.body)
	}
	if csp := ov.header.Get("Content-Security-Policy"); csp != dashboard.CSP || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	// The same address signing up again: the same answer, no second account.
	if p := h.post(h.client(), "/signup", "org_name", "Again", "email", addr, "password", "another password!", "time_zone", "UTC"); p.status != http.StatusOK {
		t.Errorf("second sign-up: %d", p.status)
	}
	if ms, _ := h.d.Accounts.Memberships(h.ctx, addr); len(ms) != 1 {
		t.Errorf("memberships after a second sign-up: %v", ms)
	}
}

// On HTTPS the session cookie is Secure and __Host- prefixed.
func TestSessionCookie_SecureOnHTTPS(t *testing.T) {
	h := newHarness(t, nil, nil)
	addr := "secure@example.com"
	h.signUp(h.client(), addr, "Secure")
	h.d.Settings.PublicURL = "https://tix.example"
	p := h.signIn(h.client(), addr, password)
	cs := (&http.Response{Header: p.header}).Cookies()
	if len(cs) != 1 || cs[0].Name != "__Host-tix_dashboard" || !cs[0].Secure || !cs[0].HttpOnly {
		t.Fatalf("cookies %+v", cs)
	}
}

// TIX_SIGNUP=invite: the form is closed.
func TestSignUp_InviteOnly(t *testing.T) {
	h := newHarness(t, nil, map[string]string{"TIX_SIGNUP": "invite"})
	c := h.client()
	if p := h.get(c, "/signup"); p.status != http.StatusForbidden {
		t.Errorf("GET signup: %d", p.status)
	}
	if p := h.post(c, "/signup", "org_name", "X", "email", "x@example.com", "password", password, "time_zone", "UTC"); p.status != http.StatusForbidden {
		t.Errorf("POST signup: %d", p.status)
	}
	if _, err := h.d.Accounts.GetUser(h.ctx, "x@example.com"); err != account.ErrNotFound {
		t.Errorf("user after a closed sign-up: %v", err)
	}
}

// A POST from another site is refused (Sec-Fetch-Site or a foreign Origin):
// the browser's cookie cannot be ridden.
func TestCrossSitePOST_Refused(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("csrf@example.com", "CSRF")
	form := map[string][]string{"type": {"sk"}, "name": {"evil"}}
	for _, hdr := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "https://evil.example"}} {
		p := h.do(c, http.MethodPost, "/o/"+o+"/test/keys", form, hdr...)
		if p.status != http.StatusForbidden {
			t.Errorf("POST with %s: %s: %d, want 403", hdr[0], hdr[1], p.status)
		}
	}
	if ks, _ := h.a.Store.Keys.ListKeys(h.ctx, o); len(ks) != 0 {
		t.Errorf("keys after cross-site posts: %v", ks)
	}
	if p := h.do(c, http.MethodPost, "/o/"+o+"/test/keys", form, "Sec-Fetch-Site", "same-origin"); p.status != http.StatusCreated {
		t.Errorf("same-origin POST: %d", p.status)
	}
}

// Signing out ends the session server-side: a copy of the cookie taken
// before is refused afterwards.
func TestStolenCookieAfterSignOut_Refused(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("thief@example.com", "Thief")
	stolen := h.client()
	u := h.srv.URL + "/"
	stolen.Jar.SetCookies(mustURL(u), c.Jar.Cookies(mustURL(u)))
	if p := h.get(stolen, "/o/"+o+"/test/api"); p.status != http.StatusOK {
		t.Fatalf("the copied cookie before sign-out: %d", p.status)
	}
	if p := h.post(c, "/signout"); p.status != http.StatusSeeOther {
		t.Fatalf("sign out: %d", p.status)
	}
	if p := h.get(stolen, "/o/"+o+"/test/api"); p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "/signin") {
		t.Errorf("the copied cookie after sign-out: %d %s, want a redirect to sign in", p.status, p.header.Get("Location"))
	}
	if p := h.post(stolen, "/o/"+o+"/test/keys", "type", "sk"); p.status != http.StatusUnauthorized {
		t.Errorf("POST with the copied cookie: %d, want 401", p.status)
	}
}

// A session id planted in the browser before sign-in (session fixation) is
// never the signed-in one: signing in issues a new id and ends the planted one.
func TestFixedSessionIDBeforeSignIn_Refused(t *testing.T) {
	h := newHarness(t, nil, nil)
	attacker := h.client()
	h.signUp(attacker, "attacker@example.com", "Attacker")
	h.signIn(attacker, "attacker@example.com", password)
	victim := h.client()
	vo := h.signUp(victim, "victim@example.com", "Victim")
	u := mustURL(h.srv.URL + "/")
	planted := attacker.Jar.Cookies(u)
	victim.Jar.SetCookies(u, planted)
	h.signIn(victim, "victim@example.com", password)
	if got := victim.Jar.Cookies(u); len(got) != 1 || got[0].Value == planted[0].Value {
		t.Fatalf("the victim's session id after sign-in is the planted one")
	}
	if p := h.get(attacker, "/o/"+vo+"/test/"); p.status == http.StatusOK {
		t.Errorf("the planted id reaches the victim's organizer: %d", p.status)
	}
	if p := h.get(attacker, "/"); p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "/signin") {
		t.Errorf("the planted id after the victim signed in: %d %s, want signed out", p.status, p.header.Get("Location"))
	}
	// An id the server never issued is refused too.
	forged := h.client()
	forged.Jar.SetCookies(u, []*http.Cookie{{Name: "tix_dashboard", Value: account.NewSecret(), Path: "/"}})
	if p := h.get(forged, "/o/"+vo+"/test/"); p.status != http.StatusSeeOther {
		t.Errorf("a made-up session id: %d", p.status)
	}
}

// Guessing a password is slowed after SlowAfter attempts and refused past
// the account's limit, even with the right password, until the window ends.
func TestSignInGuessing_SlowedThenRefused(t *testing.T) {
	const delay = 150 * time.Millisecond
	h := newHarness(t, func(s *dashboard.Settings) {
		s.SlowAfter, s.SlowDelay, s.MaxDelay, s.AccountLimit, s.ClientLimit = 2, delay, time.Second, 5, 100
	}, nil)
	h.d.Clock = clock.NewFixed(time.Now()) // one sign-in window, even across its real end (a fixed window restarts its count)
	addr := "guess@example.com"
	h.signUp(h.client(), addr, "Guess")
	c := h.client()
	var took []time.Duration
	for i := range 5 {
		start := time.Now()
		p := h.post(c, "/signin", "email", addr, "password", fmt.Sprintf("wrong guess %d", i))
		took = append(took, time.Since(start))
		if p.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i+1, p.status)
		}
	}
	if took[4] < 3*delay || took[2] < delay {
		t.Errorf("attempts took %v: the 3rd should wait >= %v, the 5th >= %v", took, delay, 3*delay)
	}
	p := h.post(c, "/signin", "email", addr, "password", password)
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Fatalf("the right password past the limit: %d (Retry-After %q), want 429", p.status, p.header.Get("Retry-After"))
	}
}

// The per-client budget: one address guessing many accounts is refused too.
func TestSignInGuessing_PerClientLimit(t *testing.T) {
	h := newHarness(t, func(s *dashboard.Settings) { s.SlowAfter, s.AccountLimit, s.ClientLimit = 100, 100, 4 }, nil)
	c := h.client()
	for i := range 6 {
		p := h.post(c, "/signin", "email", fmt.Sprintf("nobody%d@example.com", i), "password", "whatever123")
		want := http.StatusUnauthorized
		if i >= 4 {
			want = http.StatusTooManyRequests
		}
		if p.status != want {
			t.Errorf("attempt %d: %d, want %d", i+1, p.status, want)
		}
	}
}

// Concurrent attempts on one account share one budget (a conditional
// counter in the table): exactly AccountLimit of them are checked.
func TestSignInGuessing_ConcurrentAttemptsShareTheBudget(t *testing.T) {
	const limit, n = 5, 20
	h := newHarness(t, func(s *dashboard.Settings) { s.SlowAfter, s.AccountLimit, s.ClientLimit = 100, limit, 1000 }, nil)
	h.signUp(h.client(), "race@example.com", "Race")
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			p := h.post(h.client(), "/signin", "email", "race@example.com", "password", fmt.Sprint("guess", i))
			mu.Lock()
			counts[p.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[http.StatusUnauthorized] != limit || counts[http.StatusTooManyRequests] != n-limit {
		t.Errorf("statuses %v, want %d checked (401) and %d refused (429)", counts, limit, n-limit)
	}
}

// Password reset: the emailed link sets a new password once; the old one
// stops working; the form answers alike for unknown addresses.
func TestPasswordReset(t *testing.T) {
	h := newHarness(t, nil, nil)
	addr := "forgot@example.com"
	h.signUp(h.client(), addr, "Forgot")
	c := h.client()
	if p := h.post(c, "/reset", "email", "nobody@example.com"); p.status != http.StatusOK {
		t.Errorf("reset of an unknown address: %d", p.status)
	}
	if p := h.post(c, "/reset", "email", addr); p.status != http.StatusOK {
		t.Fatalf("reset: %d", p.status)
	}
	link := h.links.last(t, addr)
	tok := link[strings.Index(link, "t=")+2:]
	if p := h.post(c, "/reset/confirm", "t", tok, "password", "short"); p.status != http.StatusBadRequest {
		t.Errorf("a too-short new password: %d", p.status)
	}
	if p := h.post(c, "/reset/confirm", "t", tok, "password", "a brand new password"); p.status != http.StatusOK {
		t.Fatalf("confirm: %d %s", p.status, p.body)
	}
	if p := h.post(c, "/reset/confirm", "t", tok, "password", "yet another password"); p.status != http.StatusBadRequest {
		t.Errorf("the link a second time: %d", p.status)
	}
	if p := h.post(h.client(), "/signin", "email", addr, "password", password); p.status != http.StatusUnauthorized {
		t.Errorf("the old password: %d", p.status)
	}
	h.signIn(h.client(), addr, "a brand new password")
}

// After signing in the browser goes back where it was sent from, never to
// another site.
func TestSignIn_NextStaysOnTheDashboard(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.signUp(h.client(), "next@example.com", "Next")
	for next, want := range map[string]string{
		"https://evil.example/":          h.d.Settings.Path + "/",
		"//evil.example/":                h.d.Settings.Path + "/",
		h.d.Settings.Path + "/o/x/test/": h.d.Settings.Path + "/o/x/test/",
	} {
		p := h.post(h.client(), "/signin", "email", "next@example.com", "password", password, "next", next)
		if got := p.header.Get("Location"); got != want {
			t.Errorf("next %q: to %q, want %q", next, got, want)
		}
	}
}

// An oversized form is refused as bad input, never a 500, and writes nothing.
func TestOversizedForm_Refused(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("big@example.com", "Big")
	big := strings.Repeat("https://a.example\n", 5000)
	if p := h.post(c, "/o/"+o+"/test/keys", "type", "pk", "origins", big); p.status != http.StatusBadRequest {
		t.Errorf("a 90 KB key form: %d, want 400", p.status)
	}
	if ks, _ := h.a.Store.Keys.ListKeys(h.ctx, o); len(ks) != 0 {
		t.Errorf("keys after an oversized form: %v", ks)
	}
}
