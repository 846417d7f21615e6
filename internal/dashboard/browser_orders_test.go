package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tix/internal/testenv"
	"tix/internal/testenv/browser"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// In a real Chromium: an owner finds an order by its buyer's email, opens
// it (its timeline shows the order.paid webhook with the receiver's 200),
// refunds it after the confirmation page; a member of organizer B opening
// that order by URL gets the not-found page. Every page passes axe-core.
func TestBrowser_FindOrderByEmailAndRefund(t *testing.T) {
	h := newHarness(t, nil, nil)
	rc := newReceiver(t)
	ca, orgA := h.owner("orders-browser@example.com", "Browser Orders")
	h.post(ca, "/o/"+orgA+"/test/webhooks", "url", rc.srv.URL+"/hooks")
	eps, _ := h.a.Webhooks.Endpoints(h.ctx, orgA, ticketing.EnvTest)
	if p := h.post(ca, "/o/"+orgA+"/test/webhooks/"+eps[0].ID+"/verify"); p.status != 200 {
		t.Fatalf("verify the endpoint: %d", p.status)
	}
	s := h.shop(orgA)
	s.sell("someone@example.com", true)
	o := s.sell("Masha.Buyer@example.com", true)
	s.sell("other@example.com", false)
	testenv.WaitFor(t, 30*time.Second, "order.paid delivered to the receiver", func() bool {
		ds, err := h.a.Webhooks.OrderDeliveries(h.ctx, orgA, ticketing.EnvTest, o.ID)
		return err == nil && len(ds) == 1 && ds[0].Status == webhook.DeliveryDelivered
	})
	_, orgB := h.owner("orders-browser-b@example.com", "Browser B")

	b := browser.New(t, 3*time.Minute)
	browserSignIn(t, b, h, "orders-browser@example.com")
	run(t, b, "orders page", chromedp.Click(`.main-nav a[href$="/orders"]`), chromedp.WaitVisible("#orders-q"))
	checkPage(t, b, "orders")
	run(t, b, "search by email", chromedp.SendKeys("#orders-q", "masha.buyer@EXAMPLE.com"), chromedp.Submit("#orders-q"))
	testenv.WaitFor(t, 10*time.Second, "the search's answer", func() bool {
		q, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.readyState === "complete" ? location.search : ""`))
		return strings.Contains(q, "q=masha")
	})
	run(t, b, "the order found", chromedp.WaitVisible(`main a[href$="/orders/`+o.ID+`"]`))
	if got := text(t, b, "main tbody"); strings.Count(got, "ord_") != 1 || !strings.Contains(got, o.ID) {
		t.Errorf("the search shows %q, want %s alone", got, o.ID)
	}
	checkPage(t, b, "orders-found")
	run(t, b, "open the order", chromedp.Click(`main a[href$="/orders/`+o.ID+`"]`), chromedp.WaitVisible("#tl-h"))
	if got := text(t, b, "main table"); !strings.Contains(got, ticketing.EventOrderPaid) || !strings.Contains(got, "200") {
		t.Errorf("the timeline misses the order.paid webhook and its 200:\n%s", got)
	}
	checkPage(t, b, "order")
	phoneWidth(t, b)
	run(t, b, "refund page", chromedp.Click(`main a[href$="/refund"]`), chromedp.WaitVisible("#refund-reason"))
	checkPage(t, b, "order-refund")
	run(t, b, "refund", chromedp.SendKeys("#refund-reason", "the buyer cannot come"),
		chromedp.Click(`form[action$="/refund"] button[type=submit]`), chromedp.WaitVisible("main .alert"))
	checkPage(t, b, "order-refunded")
	got, err := h.a.Store.Orders.GetOrder(h.ctx, o.ID)
	if err != nil || got.Refund == nil || *got.Refund.Reason != "the buyer cannot come" {
		t.Fatalf("the order after the refund: %+v %v", got, err)
	}
	run(t, b, "sign out", chromedp.Click(".signout button"), chromedp.WaitVisible("#email"))

	browserSignIn(t, b, h, "orders-browser-b@example.com")
	for _, path := range []string{"/o/" + orgB + "/test/orders/" + o.ID, "/o/" + orgA + "/test/orders/" + o.ID} {
		run(t, b, "B opens A's order", chromedp.Navigate(h.url(path)), chromedp.WaitVisible("main h1"))
		if page, _ := chromedp.Run(b.Ctx, chromedp.OuterHTML("main")); strings.Contains(page, "masha.buyer") || strings.Contains(page, "Masha.Buyer") {
			t.Errorf("B sees A's order at %s:\n%s", path, page)
		}
	}
	checkPage(t, b, "order-other-organizer")
}

// browserSignIn signs addr in on the sign-in page, up to the dashboard.
func browserSignIn(t *testing.T, b *browser.Browser, h *harness, addr string) {
	t.Helper()
	run(t, b, "sign in "+addr, chromedp.Navigate(h.url("/signin")), chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", addr), chromedp.SendKeys("#password", password),
		chromedp.Submit("#password"), chromedp.WaitVisible(".main-nav"))
}
