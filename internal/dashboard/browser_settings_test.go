package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tix/internal/testenv/browser"
)

// In a real Chromium, an owner connects the organizer's T-Bank terminal
// (the bank simulator) on the Payments page: a wrong password is refused
// with the bank's answer, the right one connects and opens live mode, where
// a live key is created. Then the Settings page: a refused field shown
// inline, the email identity, a test-mode recipient, the organizer's
// language and time zone. Every page passes axe-core.
func TestBrowser_PaymentsToLiveAndSettings(t *testing.T) {
	h := bankHarness(t)
	_, o := h.owner("browser-pay@example.com", "Browser Payments")
	b := browser.New(t, 4*time.Minute)
	run(t, b, "sign in", chromedp.Navigate(h.url("/signin")), chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", "browser-pay@example.com"), chromedp.SendKeys("#password", password),
		chromedp.Submit("#password"), chromedp.WaitVisible(".main-nav"))

	run(t, b, "Payments page", chromedp.Click(`.main-nav a[href$="/payments"]`), chromedp.WaitVisible("#pay-key"))
	checkPage(t, b, "payments")
	connect := func(pw, then string) {
		run(t, b, "connect with "+pw, chromedp.SetValue("#pay-key", terminalA), chromedp.SendKeys("#pay-password", pw),
			chromedp.SetValue("#pay-tax", "usn_income"), chromedp.SetValue("#pay-vat", "none"),
			chromedp.Click(`form[action$="/payments/terminal"] button[type=submit]`), chromedp.WaitVisible(then))
	}
	connect("not-the-password", "main .alert.error")
	if got := text(t, b, "main .alert.error"); !strings.Contains(got, "204") {
		t.Errorf("the refusal on the page: %q, want the bank's error 204", got)
	}
	checkPage(t, b, "payments-refused")
	if org(h, o).Verified {
		t.Fatal("a refused terminal verified the organizer")
	}
	connect(terminalPW, "main dl.facts")
	if got := text(t, b, "main dl.facts"); !strings.Contains(got, terminalA) {
		t.Fatalf("the connected terminal on the page: %q", got)
	}
	if page, _ := chromedp.Run(b.Ctx, chromedp.OuterHTML("html")); strings.Contains(page, terminalPW) {
		t.Error("the page shows the terminal password")
	}
	checkPage(t, b, "payments-connected")

	run(t, b, "live mode", chromedp.Click(`.main-nav a.switch`), chromedp.WaitVisible(".env-live"),
		chromedp.Click(`.main-nav a[href$="/live/api"]`), chromedp.WaitVisible("#keys-h"))
	if n, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.querySelectorAll("main > .alert").length`)); n != 0 {
		t.Errorf("live mode still says the organizer is not verified")
	}
	run(t, b, "create a live key", chromedp.Click(`form[action$="/keys"] button[type=submit]`), chromedp.WaitVisible("#secret"))
	if secret, err := chromedp.Run(b.Ctx, chromedp.Value("#secret")); err != nil || !strings.HasPrefix(secret, "sk_live_") {
		t.Fatalf("the live key's secret: %q %v", secret, err)
	}
	checkPage(t, b, "live-key-created")

	run(t, b, "Settings page", chromedp.Navigate(h.url("/o/"+o+"/test/settings")), chromedp.WaitVisible("#set-sender_name"))
	checkPage(t, b, "settings")
	run(t, b, "a refused sender name", chromedp.SendKeys("#set-sender_name", "tickets@acme.example"),
		chromedp.Click(`form[action$="/settings/email"] button`), chromedp.WaitVisible("#set-sender_name-err"))
	checkPage(t, b, "settings-invalid")
	run(t, b, "the email identity", chromedp.SetValue("#set-sender_name", "Acme Live"), chromedp.SendKeys("#set-reply_to", "help@acme.example"),
		chromedp.Click(`form[action$="/settings/email"] button`), chromedp.WaitVisible("main .alert"))
	run(t, b, "a test recipient", chromedp.SendKeys("#set-test", "qa@acme.example"),
		chromedp.Click(`form[action$="/settings/test-recipients"] button`), chromedp.WaitVisible(`form[action$="/remove"]`))
	if id := identity(h, o); id.SenderName != "Acme Live" || id.ReplyTo != "help@acme.example" || !id.OwnAddress("qa@acme.example") {
		t.Errorf("identity after the browser's edits: %+v", id)
	}
	run(t, b, "language and time zone", chromedp.SetValue("#set-language", "ru"), chromedp.SetValue("#set-zone", "Asia/Vladivostok"),
		chromedp.Click(`form[action$="/settings/general"] button`), chromedp.WaitVisible(`html[lang="ru"]`))
	if id := identity(h, o); id.Lang() != "ru" {
		t.Errorf("the email language: %s", id.Lang())
	}
	if st, _ := h.d.Accounts.GetSettings(h.ctx, o); st.TimeZone != "Asia/Vladivostok" {
		t.Errorf("the time zone: %s", st.TimeZone)
	}
	checkPage(t, b, "settings-saved-ru")
	run(t, b, "Payments page again", chromedp.Navigate(h.url("/o/"+o+"/test/payments")), chromedp.WaitVisible("#pay-key"))
	phoneWidth(t, b)
}
