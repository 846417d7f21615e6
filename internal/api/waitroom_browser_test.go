package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tix/internal/auth"
	"tix/internal/testenv/browser"
)

// In a real Chromium: the hosted queue page answers the proof of work with
// Web Crypto, joins and shows its place; framed in a storefront of the
// publishable key's allowed origin, it hands the admission over by
// postMessage once admitted. Screenshots of both are kept in build/screenshots.
func TestWaitingRoom_ChromiumPageJoinsAndHandsTheAdmissionToTheStorefront(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	api := httptest.NewServer(h.handler)
	t.Cleanup(api.Close)
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, storefrontPage)
	}))
	t.Cleanup(shop.Close)
	pk, _ := h.key(orgA, auth.Publishable, withOrigins(shop.URL))
	h.protect("evt_theatre", 1000)
	page := api.URL + "/v1/queue/evt_theatre?pk=" + pk + "&origin=" + url.QueryEscape(shop.URL)

	b := browser.New(t, 3*time.Minute)
	// Alone, with the clock stopped: joined, and queued until its second settles.
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, "document.body.dataset.state", "queued")
	if pos := waitState(t, b, "document.getElementById('pos').textContent", ""); pos == "–" || pos == "" {
		t.Fatalf("position shown %q", pos)
	}
	t.Logf("screenshot: %s", b.Screenshot(t, "queue-page-queued"))
	queueLayout(t, b, "queue-page-queued")
	phoneSized(t, b, "queue-page-queued-phone")

	// In the storefront's frame, with the clock running: admitted, handed over.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				h.clk.Advance(time.Second)
			}
		}
	}()
	defer close(stop)
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(shop.URL+"/?queue="+url.QueryEscape(page))); err != nil {
		t.Fatal(err)
	}
	got := waitState(t, b, "document.getElementById('got').dataset.admission || ''", "qa.")
	t.Logf("screenshot: %s", b.Screenshot(t, "queue-page-admitted-in-storefront"))
	phoneSized(t, b, "queue-page-admitted-in-storefront-phone")
	r := h.post("/v1/seat-holds", pk, holdBody("evt_theatre", "seat_C1"), header("Origin", shop.URL), admissionHeader(got), remoteAddr("127.0.0.1:5000"))
	wantStatus(t, r, http.StatusOK)
	for _, f := range b.Failed() {
		t.Errorf("a request of the page failed: %s", f)
	}
	if e := b.ConsoleErrors(); len(e) > 0 {
		t.Errorf("errors on the page: %v", e)
	}
}

// phoneSized shows the page as is on a 390x844 phone screen, keeps a
// screenshot, checks that nothing scrolls sideways, and goes back to the
// desktop size.
func phoneSized(t *testing.T, b *browser.Browser, name string) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	overflow := b.Overflow(t)
	t.Logf("screenshot: %s", b.Screenshot(t, name))
	if overflow > 0 {
		t.Errorf("%s: on a phone the page is %d pixels too wide", name, overflow)
	}
	if !strings.Contains(name, "storefront") { // the storefront's frame is another origin's document
		queueLayout(t, b, name)
	}
	if err := chromedp.Do(b.Ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
}

// queueLayout checks the queue page's card in the tab:
// it stands clear of the screen's edges and each figure (place, wait,
// opening) keeps to one line.
func queueLayout(t *testing.T, b *browser.Browser, name string) {
	t.Helper()
	got, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`(() => {
  const d = document, m = d.querySelector('main').getBoundingClientRect(), w = d.documentElement.clientWidth, out = [];
  if (m.left < 8 || w - m.right < 8) out.push('the card touches the screen edge (' + m.left + ', ' + (w - m.right) + ')');
  for (const dd of d.querySelectorAll('dd')) {
    const size = parseFloat(getComputedStyle(dd).fontSize);
    if (dd.getBoundingClientRect().height > 1.8 * size) out.push('#' + dd.id + ' ' + JSON.stringify(dd.textContent) + ' wraps');
  }
  return out.join('; ');
})()`))
	if err != nil || got != "" {
		t.Errorf("%s: %s %v", name, got, err)
	}
}

// waitState polls expr until its value starts with want, and returns it.
func waitState(t *testing.T, b *browser.Browser, expr, want string) string {
	t.Helper()
	var got string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](expr))
		if got = v; err == nil && strings.HasPrefix(got, want) {
			return got
		}
	}
	t.Fatalf("%s = %q, want %s...; failed requests %v; errors %v", expr, got, want, b.Failed(), b.ConsoleErrors())
	return ""
}

// storefrontPage frames the queue page named by ?queue= and shows the
// admission it posts.
const storefrontPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Shop</title>
<style>body{font-family:sans-serif;margin:1rem}iframe{width:100%;height:420px;border:1px solid #ccc}#got{padding:.5rem;background:#eef}</style></head>
<body><h1>Rock Night: tickets</h1><p id="got">Waiting for the queue…</p><iframe id="q" title="Queue"></iframe>
<script>
const q = new URLSearchParams(location.search).get('queue');
document.getElementById('q').src = q;
window.addEventListener('message', (e) => {
  if (e.origin !== new URL(q).origin || !e.data || e.data.type !== 'tix.admission') return;
  const g = document.getElementById('got');
  g.dataset.admission = e.data.admission;
  g.textContent = 'Admitted until ' + e.data.expires_at + ': choose your seats.';
});
</script></body></html>`
