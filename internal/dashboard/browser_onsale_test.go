package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tix/internal/testenv/browser"
	"tix/internal/ticketing"
)

// In a real Chromium: an owner opens the Events page, unfolds an event's
// "Waiting room" form, fills the opening, rate and difficulty, and sends
// it: the page says the waiting room is on and shows the event protected,
// as the waiting room service stored it. Every page passes axe-core;
// desktop and phone screenshots of the form and of the protected event.
func TestBrowser_WaitingRoomFormProtectsEvent(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("onsale-browser@example.com", "Browser On-sale")
	h.importedTier(c, o)
	ev := h.onlyEvent(o)
	b := browser.New(t, 3*time.Minute)
	browserSignIn(t, b, h, "onsale-browser@example.com")

	opens := time.Now().Add(48 * time.Hour)
	run(t, b, "Events page", chromedp.Click(`.main-nav a[href$="/events"]`), chromedp.WaitVisible("#ev-"+ev.ID),
		chromedp.Click(`section.event details summary`), chromedp.WaitVisible("#opens-"+ev.ID), chromedp.ScrollIntoView("#ev-"+ev.ID))
	if got := text(t, b, `label[for="opens-`+ev.ID+`"]`); !strings.Contains(got, "Asia/Yekaterinburg") {
		t.Errorf("the opening's label %q does not name the time zone it is read in", got)
	}
	checkPage(t, b, "waiting-room-form")
	run(t, b, "fill the form", chromedp.SetValue("#opens-"+ev.ID, local(opens)),
		chromedp.SendKeys("#rate-"+ev.ID, "200"), chromedp.SendKeys("#bits-"+ev.ID, "12"))
	phoneShot(t, b, "waiting-room-form-phone", "#opens-"+ev.ID, false) // no reload: the filled fields stay
	run(t, b, "protect", chromedp.Click(`form[action$="/events/`+ev.ID+`/waiting-room"] button[type=submit]`),
		chromedp.WaitVisible("main > .alert"), chromedp.WaitVisible("section.event .queue"))
	if got := text(t, b, "section.event .queue"); !strings.Contains(got, "200") || !strings.Contains(got, "12") ||
		!strings.Contains(got, local(opens)[:10]) || !strings.Contains(got, "/v1/queue/"+ev.ID) {
		t.Errorf("the protected event shows %q", got)
	}
	p, err := h.a.Waitroom.Protection(h.ctx, ticketing.Tenant{OrganizerID: o, Environment: ticketing.EnvTest}, ev.ID)
	if err != nil || p.Rate != 200 || p.Difficulty != 12 || p.OpensAt.Unix()/60 != opens.Unix()/60 {
		t.Fatalf("the stored protection: %+v %v", p, err)
	}
	if got := text(t, b, "section.event details summary"); !strings.Contains(got, "Change") {
		t.Errorf("a protected event's form is offered as %q, want a change", got)
	}
	// The folded form stands apart from the page's next text (it once ran into it).
	gap, err := chromedp.Run(b.Ctx, chromedp.Evaluate[float64](`document.querySelector("section.event").nextElementSibling.getBoundingClientRect().top -
		document.querySelector("section.event details").getBoundingClientRect().bottom`))
	if err != nil || gap < 12 {
		t.Errorf("%.0f px between the folded form and the next text (%v), want at least 12", gap, err)
	}
	run(t, b, "scroll to the event", chromedp.ScrollIntoView("#ev-"+ev.ID))
	checkPage(t, b, "waiting-room-on")
	run(t, b, "Events page again", chromedp.Navigate(h.url("/o/"+o+"/test/events")), chromedp.WaitVisible("section.event .queue"))
	phoneShot(t, b, "waiting-room-on-phone", "#ev-"+ev.ID, true)
}
