package api_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tix/internal/api"
	"tix/internal/testenv/browser"
)

// In a real Chromium, GET /v1/docs shows the reference: every operation of
// the OpenAPI document is rendered, every request of the page succeeds, and
// the page throws nothing. A screenshot of it is kept in build/screenshots.
func TestDocs_ChromiumShowsEveryOperation(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewServer(h.handler)
	t.Cleanup(srv.Close)
	doc, err := api.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := operationIDs(t, doc)

	b := browser.New(t, 3*time.Minute)
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(srv.URL+"/v1/docs")); err != nil {
		t.Fatalf("open /v1/docs: %v", err)
	}
	// Redoc gives each operation's section the id tag/<tag>/operation/<operationId>.
	got, err := waitForOperations(b, len(want), time.Minute)
	shot := b.Screenshot(t, "docs")
	t.Logf("screenshot: %s", shot)
	if err != nil {
		t.Fatalf("the reference shows %d of %d operations: %v; failed requests %v; errors %v",
			len(got), len(want), err, b.Failed(), b.ConsoleErrors())
	}
	// An operation itself, with the menu open at it: kept for a person to look at.
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](
		`(() => { const e = document.getElementById("tag/Events/operation/getEventAvailability"); if (!e) return false; e.scrollIntoView(); return true })()`)); err != nil {
		t.Errorf("scroll to getEventAvailability: %v", err)
	} else {
		time.Sleep(500 * time.Millisecond) // the menu follows the scroll
		t.Logf("screenshot: %s", b.Screenshot(t, "operation"))
	}
	checkPhoneWidth(t, b)
	for _, id := range want {
		if !slices.Contains(got, id) {
			t.Errorf("operation %s is not shown", id)
		}
	}
	// Every request to tix succeeds; one elsewhere (Redoc's footer logo) is
	// only ever the page's Content-Security-Policy refusing it.
	for _, f := range b.Failed() {
		if strings.HasPrefix(f.URL, srv.URL+"/") || f.Blocked != "csp" {
			t.Errorf("a request of the page failed: %s", f)
		} else {
			t.Logf("refused by the page's Content-Security-Policy, as meant: %s", f.URL)
		}
	}
	if e := b.ConsoleErrors(); len(e) > 0 {
		t.Errorf("errors on the page: %v", e)
	}
}

// checkPhoneWidth shows the reference on a phone-sized screen (390x844, a
// current iPhone's CSS pixels): it fits the width, without a sideways scroll,
// and a screenshot is kept for a person to look at.
func checkPhoneWidth(t *testing.T, b *browser.Browser) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload()); err != nil {
		t.Fatalf("phone-sized viewport: %v", err)
	}
	if _, err := waitForOperations(b, 1, time.Minute); err != nil {
		t.Fatalf("the reference on a phone: %v", err)
	}
	overflow, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
	if err != nil {
		t.Fatalf("measure the page's width: %v", err)
	}
	t.Logf("screenshot: %s", b.Screenshot(t, "phone"))
	if overflow > 0 {
		t.Errorf("on a 390-pixel-wide screen the page is %d pixels too wide (sideways scrolling)", overflow)
	}
}

// waitForOperations polls the page until it shows n operations, the time is
// up, or a request to the page's own site failed (the page will not render).
func waitForOperations(b *browser.Browser, n int, timeout time.Duration) ([]string, error) {
	const rendered = `Array.from(document.querySelectorAll('[id*="/operation/"]'), e => e.id.split("/operation/")[1])`
	deadline := time.Now().Add(timeout)
	for {
		got, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](rendered))
		switch {
		case err == nil && len(got) >= n:
			return got, nil
		case time.Now().After(deadline):
			return got, fmt.Errorf("still %d after %s (last error: %v)", len(got), timeout, err)
		}
		for _, f := range b.Failed() {
			if f.Status != 0 {
				return got, fmt.Errorf("the page's request %s failed", f)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// operationIDs lists the operationId of every operation of an OpenAPI document.
func operationIDs(t *testing.T, doc []byte) []string {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ops := range d.Paths {
		for method, raw := range ops {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if method == "parameters" || json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			ids = append(ids, op.OperationID)
		}
	}
	if len(ids) < 10 {
		t.Fatalf("found %d operations in the document", len(ids))
	}
	slices.Sort(ids)
	return ids
}
