package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"tix/internal/emailsend/emailtest"
	"tix/internal/testenv"
	"tix/internal/testenv/browser"
)

// signUpInBrowser fills the sign-up form at base (the dashboard's URL the
// browser uses) and opens the verification link from the local inbox
// (MailDev), checking both pages.
func signUpInBrowser(t *testing.T, b *browser.Browser, base, addr string) {
	t.Helper()
	run(t, b, "sign-up page", chromedp.Navigate(base+"/signup"), chromedp.WaitVisible("#org_name"))
	checkPage(t, b, "signup")
	run(t, b, "sign up", chromedp.SendKeys("#org_name", "Browser Concerts"),
		chromedp.SendKeys("#email", addr), chromedp.SendKeys("#password", password),
		chromedp.Submit("#password"), chromedp.WaitVisible("main .alert"))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := emailtest.MailDev{URL: testenv.MailDevURL(t)}.Raw(ctx, addr, time.Minute)
	if err != nil {
		t.Fatalf("the verification email in the inbox: %v", err)
	}
	msg, err := emailtest.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`https?://\S+/verify\?t=[A-Za-z0-9_-]+`).FindString(msg.Text)
	if link == "" {
		t.Fatalf("no verification link in:\n%s", msg.Text)
	}
	run(t, b, "verify", chromedp.Navigate(link), chromedp.WaitVisible("main .alert"))
	checkPage(t, b, "verified")
}

// In a real Chromium with its virtual authenticator (CTAP2, resident keys,
// user verification): sign up, verify the address from the local inbox,
// sign in with the password, add a passkey on the passkeys page, sign out,
// sign in with the passkey. The browser uses http://localhost:<port>, the
// relying party's origin (the public URL is 127.0.0.1, an IP address
// browsers refuse as a relying party). Every page passes axe-core.
func TestBrowser_SignInWithAPasskey(t *testing.T) {
	h := newHarness(t, nil, nil)
	b := browser.New(t, 4*time.Minute)
	if _, err := chromedp.Call(b.Ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	auth, err := chromedp.Call(b.Ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21,
			Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true, HasUserVerification: true,
			IsUserVerified: true, AutomaticPresenceSimulation: true},
	})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	base := h.passkeyOrigin() + h.d.Settings.Path
	addr := fmt.Sprintf("passkey-%d@example.com", time.Now().UnixNano())
	signUpInBrowser(t, b, base, addr)

	run(t, b, "sign in with the password", chromedp.Navigate(base+"/signin"), chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", addr), chromedp.SendKeys("#password", password),
		chromedp.Submit("#password"), chromedp.WaitVisible(".main-nav"))
	run(t, b, "passkeys page", chromedp.Click(`header a[href$="/account/passkeys"]`), chromedp.WaitVisible("#passkey-add"))
	checkPage(t, b, "passkeys")
	run(t, b, "add a passkey", chromedp.SendKeys("#passkey-name", "Work laptop"),
		chromedp.Click(`#passkey-add button[type=submit]`), chromedp.WaitVisible(`form[action$="/account/passkeys/remove"]`))
	if got := text(t, b, "main table"); !strings.Contains(got, "Work laptop") {
		t.Errorf("the passkeys page after adding: %q", got)
	}
	checkPage(t, b, "passkey-added")
	phoneWidth(t, b)
	run(t, b, "Russian", chromedp.Click(`a[lang="ru"]`), chromedp.WaitVisible(`html[lang="ru"]`))
	checkPage(t, b, "passkey-added-ru")
	creds, err := chromedp.Call(b.Ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams(auth))
	if err != nil || len(creds.Credentials) != 1 || !creds.Credentials[0].IsResidentCredential || creds.Credentials[0].RpID != "localhost" {
		t.Fatalf("the authenticator's credentials: %+v %v, want one discoverable credential for localhost", creds, err)
	}

	run(t, b, "sign out", chromedp.Click(".signout button"), chromedp.WaitVisible("#passkey-button"))
	checkPage(t, b, "signin-with-passkey")
	run(t, b, "sign in with the passkey", chromedp.Click("#passkey-button"), chromedp.WaitVisible(".main-nav"))
	if got := text(t, b, ".who"); got != addr {
		t.Errorf("signed in as %q, want %s", got, addr)
	}
	checkPage(t, b, "signed-in-with-passkey")
	creds, _ = chromedp.Call(b.Ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams(auth))
	ps, err := h.d.Passkeys.ListPasskeys(h.ctx, addr)
	if err != nil || len(ps) != 1 || ps[0].LastUsedAt == nil || len(creds.Credentials) != 1 ||
		float64(ps[0].SignCount) != creds.Credentials[0].SignCount {
		t.Errorf("stored passkey %+v (%v) after the sign-in, authenticator %+v: want the authenticator's sign count", ps, err, creds)
	}
	run(t, b, "audit log", chromedp.Click(`.main-nav a[href$="/audit"]`), chromedp.WaitVisible("table"))
	if got := text(t, b, "main table"); !strings.Contains(got, "passkey.add") || !strings.Contains(got, "passkey Work laptop") {
		t.Errorf("the audit log does not show the passkey and the sign-in with it:\n%s", got)
	}
}

// On the public URL's own address (127.0.0.1: no relying party for an IP
// address), the sign-in page says where passkeys work instead of offering a
// button that cannot.
func TestBrowser_PasskeyElsewhereOnAnIPAddress(t *testing.T) {
	h := newHarness(t, nil, nil)
	b := browser.New(t, 2*time.Minute)
	run(t, b, "sign-in page on 127.0.0.1", chromedp.Navigate(h.url("/signin")), chromedp.WaitVisible(".passkey-elsewhere"))
	if got := text(t, b, ".passkey-elsewhere a"); got != h.passkeyOrigin()+h.d.Settings.Path+"/signin" {
		t.Errorf("the hint links %q", got)
	}
	if n, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.querySelectorAll("#passkey-signin:not([hidden])").length`)); n != 0 {
		t.Errorf("the passkey button is offered on an address where it cannot work")
	}
	checkPage(t, b, "signin-passkey-elsewhere")
}

// In a real Chromium signed in to the dashboard: a page of another site
// posting to it, a form creating a key and a script starting a passkey
// ceremony, is refused (403, Sec-Fetch-Site: cross-site) and creates
// nothing.
func TestBrowser_CrossSitePOSTRefused(t *testing.T) {
	h := newHarness(t, nil, nil)
	_, org := h.owner("cross@example.com", "Cross")
	dash := h.passkeyOrigin() + h.d.Settings.Path
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><title>Win a prize</title><main>
<form method="post" action="%s/o/%s/test/keys"><input type="hidden" name="type" value="sk"><button id="go">Claim</button></form>
<p id="fetched"></p></main>`, dash, org)
	}))
	t.Cleanup(evil.Close)
	b := browser.New(t, 2*time.Minute)
	run(t, b, "sign in", chromedp.Navigate(dash+"/signin"), chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", "cross@example.com"), chromedp.SendKeys("#password", password),
		chromedp.Submit("#password"), chromedp.WaitVisible(".main-nav"))
	run(t, b, "the other site", chromedp.Navigate(evil.URL), chromedp.WaitVisible("#go"))
	status, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`fetch(`+strconv.Quote(dash+"/passkeys/add/begin")+`,
		{method: "POST", credentials: "include", mode: "no-cors", body: new URLSearchParams({name: "evil"})}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the other site's fetch: %v", err)
	}
	t.Logf("the other site's fetch: status %d (opaque to it)", status)
	run(t, b, "the other site's form", chromedp.Click("#go"), chromedp.WaitVisible("main h1"))
	if page, _ := chromedp.Run(b.Ctx, chromedp.OuterHTML("main")); strings.Contains(page, "sk_test_") {
		t.Errorf("the cross-site form created a key:\n%s", page)
	}
	if ks, _ := h.a.Store.Keys.ListKeys(h.ctx, org); len(ks) != 0 {
		t.Errorf("keys after the cross-site POST: %d", len(ks))
	}
	if ts, _ := h.d.Accounts.Entries(h.ctx, org, 10); len(ts) > 0 && ts[0].Action != "account.signin" {
		t.Errorf("the audit log's last entry %+v: the cross-site requests did something", ts[0])
	}
	refused := map[string]int64{}
	for _, f := range b.Failed() {
		for _, path := range []string{"/test/keys", "/passkeys/add/begin"} {
			if strings.HasSuffix(f.URL, path) {
				refused[path] = f.Status
			}
		}
	}
	if refused["/test/keys"] != http.StatusForbidden || refused["/passkeys/add/begin"] != http.StatusForbidden {
		t.Errorf("answers to the other site's requests: %v, want 403 for both", refused)
	}
}
