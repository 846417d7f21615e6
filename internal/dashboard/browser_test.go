package dashboard_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tix/internal/dashboard/account"
	"tix/internal/testenv"
	"tix/internal/testenv/browser"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// axeFinding is one rule axe-core found broken on a page.
type axeFinding struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeScript is axe-core as pinned in scripts/package.json.
func axeScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core: %v (run make setup: it installs scripts/package.json's npm tools)", err)
	}
	return string(b)
}

// checkPage runs axe-core on the tab's page (0 serious or critical
// findings), checks that it throws nothing and that the browser refused
// nothing under the page's CSP, and keeps a screenshot.
func checkPage(t *testing.T, b *browser.Browser, name string) {
	t.Helper()
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[any](axeScript(t))); err != nil {
		t.Fatalf("%s: inject axe-core: %v", name, err)
	}
	fs, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]axeFinding](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help, nodes: v.nodes.map(n => n.target.join(" "))})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: run axe-core: %v", name, err)
	}
	for _, f := range fs {
		if f.Impact == "serious" || f.Impact == "critical" {
			t.Errorf("%s: axe-core %s (%s): %s at %v", name, f.ID, f.Impact, f.Help, f.Nodes)
		} else {
			t.Logf("%s: axe-core %s (%s): %s", name, f.ID, f.Impact, f.Help)
		}
	}
	for _, f := range b.Failed() {
		if f.Blocked != "" {
			t.Errorf("%s: the browser refused %s", name, f)
		}
	}
	if e := b.ConsoleErrors(); len(e) > 0 {
		t.Errorf("%s: errors on the page: %v", name, e)
	}
	t.Logf("screenshot: %s", b.Screenshot(t, name))
}

func run(t *testing.T, b *browser.Browser, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func text(t *testing.T, b *browser.Browser, sel string) string {
	t.Helper()
	s, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`(document.querySelector(`+strconv.Quote(sel)+`) || {}).innerText || ""`))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// In a real Chromium: sign up, open the verification link from the local
// inbox (MailDev), sign in, create a key and see its secret once, create a
// webhook endpoint, verify it and press Test; every page passes axe-core.
func TestBrowser_SignUpToWebhookTest(t *testing.T) {
	h := newHarness(t, nil, nil)
	rc := newReceiver(t)
	b := browser.New(t, 4*time.Minute)
	addr := fmt.Sprintf("browser-%d@example.com", time.Now().UnixNano())
	signUpInBrowser(t, b, h.url(""), addr)

	run(t, b, "sign in", chromedp.Navigate(h.url("/signin")), chromedp.WaitVisible("#email"))
	checkPage(t, b, "signin")
	run(t, b, "sign in", chromedp.SendKeys("#email", addr), chromedp.SendKeys("#password", password),
		chromedp.Submit("#password"), chromedp.WaitVisible(".main-nav"))
	checkPage(t, b, "overview")

	run(t, b, "API page", chromedp.Click(`.main-nav a[href$="/api"]`), chromedp.WaitVisible("#keys-h"))
	checkPage(t, b, "api")
	run(t, b, "create a key", chromedp.SendKeys("#key-name", "server"),
		chromedp.Click(`form[action$="/keys"] button[type=submit]`), chromedp.WaitVisible("#secret"))
	secret, err := chromedp.Run(b.Ctx, chromedp.Value("#secret"))
	if err != nil || !strings.HasPrefix(secret, "sk_test_") {
		t.Fatalf("the key's secret on the page: %q %v", secret, err)
	}
	checkPage(t, b, "key-created")
	run(t, b, "back", chromedp.Click(`main a[href$="/api"]`), chromedp.WaitVisible("#keys-h"))
	if page, _ := chromedp.Run(b.Ctx, chromedp.OuterHTML("html")); strings.Contains(page, secret) || !strings.Contains(page, secret[len(secret)-4:]) {
		t.Errorf("the API page shows the secret again, or not the key's last four")
	}

	run(t, b, "create an endpoint", chromedp.SendKeys("#wh-url", rc.srv.URL+"/hooks"),
		chromedp.Click(`form[action$="/webhooks"] button[type=submit]`), chromedp.WaitVisible("#secret"))
	checkPage(t, b, "endpoint-secret")
	run(t, b, "endpoint page", chromedp.Click(`main a[href*="/webhooks/"]`), chromedp.WaitVisible(".actions"))
	run(t, b, "verify ownership", chromedp.Click(`form[action$="/verify"] button`), chromedp.WaitVisible("#result"))
	if got := text(t, b, "#result"); !strings.Contains(got, "200") {
		t.Errorf("verify's result: %q", got)
	}
	run(t, b, "press Test", chromedp.Click(`form[action$="/test"] button`))
	testenv.WaitFor(t, 10*time.Second, "Test's result on the page", func() bool { return strings.HasPrefix(text(t, b, "#result"), "Test:") })
	testenv.WaitFor(t, 10*time.Second, "webhook.test at the receiver", func() bool {
		return strings.Join(rc.types(), ",") == webhook.TypeEndpointVerify+","+webhook.TypeWebhookTest
	})
	if got := text(t, b, "#result"); !strings.Contains(got, "200") {
		t.Errorf("Test's result: %q", got)
	}
	checkPage(t, b, "endpoint")
	phoneWidth(t, b)
	run(t, b, "audit log", chromedp.Click(`.main-nav a[href$="/audit"]`), chromedp.WaitVisible("table"))
	checkPage(t, b, "audit")
	run(t, b, "team", chromedp.Click(`.main-nav a[href$="/members"]`), chromedp.WaitVisible("#invite-email"))
	checkPage(t, b, "members")
	run(t, b, "Russian", chromedp.Click(`a[lang="ru"]`), chromedp.WaitVisible(`html[lang="ru"]`))
	checkPage(t, b, "members-ru")
}

// phoneWidth reloads the page on a 390-pixel-wide screen: nothing scrolls sideways.
func phoneWidth(t *testing.T, b *browser.Browser) { phoneShot(t, b, "phone", "", true) }

// phoneShot shows the page on a 390x844 phone screen (reloaded, or as it
// stands with its filled fields), scrolled to sel (if any), keeps a
// screenshot and checks that nothing scrolls sideways; then back to the
// desktop size.
func phoneShot(t *testing.T, b *browser.Browser, name, sel string, reload bool) {
	t.Helper()
	size := chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)
	if reload {
		run(t, b, "phone-sized viewport", size, chromedp.Reload(), chromedp.WaitVisible("main h1"))
	} else {
		run(t, b, "phone-sized viewport", size)
	}
	if sel != "" {
		run(t, b, "scroll to "+sel, chromedp.ScrollIntoView(sel))
	}
	overflow := b.Overflow(t)
	t.Logf("screenshot: %s", b.Screenshot(t, name))
	if overflow > 0 {
		t.Errorf("%s: on a phone the page is %d pixels too wide", name, overflow)
	}
	if reload {
		run(t, b, "desktop viewport", chromedp.EmulateViewport(1280, 900), chromedp.Reload(), chromedp.WaitVisible("main h1"))
	} else {
		run(t, b, "desktop viewport", chromedp.EmulateViewport(1280, 900))
	}
}

// In a real Chromium: a support member has no API page (no link, 403 by
// URL), and a member of organizer B opening organizer A's endpoint by URL
// gets the not-found page.
func TestBrowser_SupportAndOtherOrganizer(t *testing.T) {
	h := newHarness(t, nil, nil)
	rc := newReceiver(t)
	ca, orgA := h.owner("a-owner@example.com", "A")
	h.post(ca, "/o/"+orgA+"/test/webhooks", "url", rc.srv.URL)
	eps, _ := h.a.Webhooks.Endpoints(h.ctx, orgA, ticketing.EnvTest)
	h.member(orgA, "a-support@example.com", account.Support)
	orgB := h.signUp(h.client(), "b-owner@example.com", "B")

	b := browser.New(t, 3*time.Minute)
	signIn := func(addr string) {
		run(t, b, "sign in "+addr, chromedp.Navigate(h.url("/signin")), chromedp.WaitVisible("#email"),
			chromedp.SendKeys("#email", addr), chromedp.SendKeys("#password", password),
			chromedp.Submit("#password"), chromedp.WaitVisible(".main-nav"))
	}
	signIn("a-support@example.com")
	if n, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[href$="/api"]').length`)); n != 0 {
		t.Errorf("support's overview links the API page %d times", n)
	}
	checkPage(t, b, "support-overview")
	run(t, b, "support opens the API page by URL", chromedp.Navigate(h.url("/o/"+orgA+"/test/api")), chromedp.WaitVisible("main h1"))
	if page, _ := chromedp.Run(b.Ctx, chromedp.OuterHTML("main")); strings.Contains(page, "keys-h") || !strings.Contains(page, "role") {
		t.Errorf("support on the API page:\n%s", page)
	}
	checkPage(t, b, "support-denied")
	run(t, b, "sign out", chromedp.Click(".signout button"), chromedp.WaitVisible("#email"))

	signIn("b-owner@example.com")
	run(t, b, "B opens A's endpoint", chromedp.Navigate(h.url("/o/"+orgB+"/test/webhooks/"+eps[0].ID)), chromedp.WaitVisible("main h1"))
	if page, _ := chromedp.Run(b.Ctx, chromedp.OuterHTML("main")); strings.Contains(page, rc.srv.URL) {
		t.Errorf("B sees A's endpoint:\n%s", page)
	}
	checkPage(t, b, "other-organizer-not-found")
	run(t, b, "B opens A's organizer", chromedp.Navigate(h.url("/o/"+orgA+"/test/api")), chromedp.WaitVisible("main h1"))
	if page, _ := chromedp.Run(b.Ctx, chromedp.OuterHTML("main")); strings.Contains(page, rc.srv.URL) || strings.Contains(page, "keys-h") {
		t.Errorf("B sees A's API page:\n%s", page)
	}
}
