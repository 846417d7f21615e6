package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tix/internal/testenv"
	"tix/internal/testenv/browser"
)

// In a real Chromium: an owner fills the endpoint's "Replay events" form,
// sends it and lands on the replay's progress page, which reaches done
// (two events queued and sent again) after a reload. Every page passes
// axe-core; desktop and phone screenshots of the form and the progress.
func TestBrowser_ReplayEventsFormAndProgress(t *testing.T) {
	h := newHarness(t, nil, nil)
	r := h.replayEndpoint("replay-browser@example.com", "Browser Replays")
	b := browser.New(t, 3*time.Minute)
	browserSignIn(t, b, h, "replay-browser@example.com")

	run(t, b, "API page", chromedp.Click(`.main-nav a[href$="/api"]`), chromedp.WaitVisible("#keys-h"),
		chromedp.Click(`main a[href$="/webhooks/`+r.ep+`"]`), chromedp.WaitVisible("#replay-since"), chromedp.ScrollIntoView("#replay-h"))
	checkPage(t, b, "replay-form")
	phoneShot(t, b, "replay-form-phone", "#replay-h", true)
	run(t, b, "replay since an hour ago", chromedp.SetValue("#replay-since", local(time.Now().Add(-time.Hour))),
		chromedp.Click(`form[action$="/replay"] button[type=submit]`), chromedp.WaitVisible("#replay-status"))
	if got := text(t, b, "#replay-status"); got == "" {
		t.Error("the progress page shows no status")
	}
	checkPage(t, b, "replay-progress")
	testenv.WaitFor(t, 60*time.Second, "done on the reloaded page", func() bool {
		if err := chromedp.Do(b.Ctx, chromedp.Reload(), chromedp.WaitVisible("#replay-status")); err != nil {
			t.Fatal(err)
		}
		return text0(t, b, `document.getElementById("replay-status").dataset.status`) == "done"
	})
	if q, d := text(t, b, "#replay-queued"), text(t, b, "#replay-done"); q != "2" || d != "2" {
		t.Errorf("queued %q, done %q: want 2 and 2", q, d)
	}
	if got := text(t, b, "#replay-status"); !strings.HasPrefix(got, "Done") && !strings.HasPrefix(got, "Готово") {
		t.Errorf("the status once done: %q", got)
	}
	checkPage(t, b, "replay-done")
	phoneShot(t, b, "replay-done-phone", "", true)
}
