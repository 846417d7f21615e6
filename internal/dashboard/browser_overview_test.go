package dashboard_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tix/internal/testenv"
	"tix/internal/testenv/browser"
	"tix/internal/ticketing"
)

// In a real Chromium: upload a catalog file with a problem and see it
// beside its line, then a valid one and see its tier; after an order the
// overview's live chart (uPlot, a canvas) shows it; every page passes
// axe-core and the CSP refuses nothing.
func TestBrowser_EventsUploadAndLiveChart(t *testing.T) {
	h := newHarness(t, nil, nil)
	_, org := h.owner("chart-owner@example.com", "Chart Concerts")
	dir := t.TempDir()
	broken, valid := filepath.Join(dir, "broken.json"), filepath.Join(dir, "jazz.json")
	if err := os.WriteFile(broken, []byte(badCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(valid, []byte(catalogFile("Jazz Night")), 0o600); err != nil {
		t.Fatal(err)
	}

	b := browser.New(t, 4*time.Minute)
	run(t, b, "sign in", chromedp.Navigate(h.url("/signin")), chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", "chart-owner@example.com"), chromedp.SendKeys("#password", password),
		chromedp.Submit("#password"), chromedp.WaitVisible("#orders-chart"))
	run(t, b, "events page", chromedp.Click(`.main-nav a[href$="/events"]`), chromedp.WaitVisible("#catalog-file"))
	run(t, b, "upload a broken file", chromedp.SetUploadFiles("#catalog-file", []string{broken}),
		chromedp.Click(`form[action$="/catalog"] button[type=submit]`), chromedp.WaitVisible("#problems"))
	if got := text(t, b, "#line-14"); !strings.Contains(got, "events[0].tiers[0].price") || !strings.Contains(got, `"price": -5`) {
		t.Errorf("line 14's problem: %q", got)
	}
	checkPage(t, b, "events-problems")
	run(t, b, "upload the valid file", chromedp.SetUploadFiles("#catalog-file", []string{valid}),
		chromedp.Click(`form[action$="/catalog"] button[type=submit]`), chromedp.WaitVisible("#imported-h"))
	if got := text(t, b, "main"); !strings.Contains(got, "Floor") || strings.Contains(got, "events[0]") {
		t.Errorf("the Events page after the import:\n%s", got)
	}
	checkPage(t, b, "events")

	paid := h.order(org, h.onlyEvent(org).Tiers[0], 2, true)
	run(t, b, "overview", chromedp.Click(`.main-nav a[href$="/test/"]`), chromedp.WaitVisible("#orders-chart canvas"))
	points := func() string {
		s, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.getElementById("orders-chart").dataset.points || ""`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	testenv.WaitFor(t, 15*time.Second, "the chart's orders", func() bool { return points() != "0" })
	if got := points(); got != "1" {
		t.Errorf("the chart counts %q orders, want 1", got)
	}
	if got := text(t, b, "main table"); !strings.Contains(got, "Jazz Night") {
		t.Errorf("today's sales: %q", got)
	}
	run(t, b, "scroll to the chart", chromedp.ScrollIntoView("#orders-chart"))
	checkPage(t, b, "overview-chart")
	phoneWidth(t, b)

	// A ticket admitted at the door shows in the event's door counts.
	if res, err := h.a.CheckIns.Scan(h.ctx, ticketing.Tenant{OrganizerID: org, Environment: ticketing.EnvTest},
		ticketing.Scan{Code: paid.Tickets[0].Number, Gate: "north", KeyID: "key_dash"}); err != nil || res.Result != ticketing.ResultAdmitted {
		t.Fatalf("scan: %+v %v", res, err)
	}
	run(t, b, "events page with the door", chromedp.Click(`.main-nav a[href$="/events"]`), chromedp.WaitVisible("p.door"))
	if got := text(t, b, "p.door"); !strings.Contains(got, "2") || !strings.Contains(got, "north 1") {
		t.Errorf("door counts: %q", got)
	}
	checkPage(t, b, "events-door")
}
