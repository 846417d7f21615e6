package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// shop is an organizer's test-mode event on the harness's table, sold
// through the ticketing service the API uses.
type shop struct {
	h   *harness
	org string
	ev  *ticketing.Event
	n   int
}

func (h *harness) shop(org string) *shop {
	h.t.Helper()
	e := ticketingtest.Event(time.Now().UTC())
	e.ID, e.OrganizerID, e.Title = "evt_"+org, org, "Night of "+org
	e.Tiers[0].ID, e.Tiers[0].Capacity = "tier_ga_"+org, 100
	e.Tiers[1].ID = "tier_seat_" + org
	e.Zones[0].PrimaryTierID, e.Seating.Zones[0].PrimaryTierID = e.Tiers[1].ID, e.Tiers[1].ID
	if err := h.a.Store.Catalog.PutEvent(h.ctx, e); err != nil {
		h.t.Fatal(err)
	}
	return &shop{h: h, org: org, ev: e}
}

// sell creates an order of one GA ticket for email, paid when paid is true.
func (s *shop) sell(email string, paid bool) *ticketing.Order {
	s.h.t.Helper()
	s.n++
	qty := 1
	c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: s.org, Environment: ticketing.EnvTest}, KeyID: "key_dash", IP: "192.0.2.1"}
	res, err := s.h.a.Sales.Orders.CreateOrder(s.h.ctx, c, s.org+"-"+strconv.Itoa(s.n),
		ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, EventID: &s.ev.ID, TierID: &s.ev.Tiers[0].ID, Quantity: &qty})
	if err != nil {
		s.h.t.Fatalf("order for %s: %v", email, err)
	}
	if !paid {
		return res.Order
	}
	o, err := s.h.a.Sales.Orders.Simulate(s.h.ctx, c.Tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil {
		s.h.t.Fatal(err)
	}
	return o
}

var orderIDRe = regexp.MustCompile(`ord_[0-9A-Za-z]+`)

// listed are the order ids a list page's table shows, in order, once each.
func listed(body string) []string {
	_, body, _ = strings.Cut(body, "<tbody>")
	body, _, _ = strings.Cut(body, "</tbody>")
	var ids []string
	seen := map[string]bool{}
	for _, id := range orderIDRe.FindAllString(body, -1) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

func wantListed(t *testing.T, what string, p page, want ...string) {
	t.Helper()
	if p.status != http.StatusOK {
		t.Fatalf("%s: %d\n%s", what, p.status, p.body)
	}
	if got := listed(p.body); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// The search box finds an order by the buyer's email (any case), by a
// ticket number or by its id, in this organizer's mode only; anything else
// is a 400 saying what to type.
func TestOrdersPage_Search(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, org := h.owner("orders-search@example.com", "Search")
	_, other := h.owner("orders-other@example.com", "Other")
	s, so := h.shop(org), h.shop(other)
	ann1 := s.sell("ann@example.com", true)
	bob := s.sell("bob@example.com", true)
	ann2 := s.sell("Ann@Example.com", false)
	theirs := so.sell("ann@example.com", true)
	list := "/o/" + org + "/test/orders"

	wantListed(t, "by email", h.get(c, list+"?q="+url.QueryEscape(" ANN@example.com ")), ann2.ID, ann1.ID)
	wantListed(t, "by the order's ticket number", h.get(c, list+"?q="+strings.ToLower(bob.TicketNumber)), bob.ID)
	wantListed(t, "by a ticket's number", h.get(c, list+"?q="+bob.Tickets[0].Number), bob.ID)
	wantListed(t, "by id", h.get(c, list+"?q="+ann1.ID), ann1.ID)
	wantListed(t, "another organizer's order id", h.get(c, list+"?q="+theirs.ID))
	wantListed(t, "another organizer's ticket", h.get(c, list+"?q="+theirs.TicketNumber))
	wantListed(t, "live mode", h.get(c, "/o/"+org+"/live/orders?q=ann%40example.com"))
	for _, bad := range []string{"ann", "12345", "a@" + strings.Repeat("x", 300)} {
		p := h.get(c, list+"?q="+url.QueryEscape(bad))
		if p.status != http.StatusBadRequest || len(listed(p.body)) != 0 {
			t.Errorf("search %q: %d, want 400 without orders", bad, p.status)
		}
	}
	if p := h.get(c, list+"?q=nothing"); !regexp.MustCompile(`class="alert error"[^>]*>search by an order id`).MatchString(p.body) {
		t.Errorf("the 400 does not say what to search by:\n%s", p.body)
	}
}

// The list's filters are the contract's (status, event, creation days in
// the organizer's time zone), the same query as GET /orders: newest first,
// 20 a page with a link to the next; bad values are a 400 on the page.
func TestOrdersPage_Filters(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, org := h.owner("orders-filters@example.com", "Filters")
	s := h.shop(org)
	var all []string
	for i := range 21 {
		o := s.sell("f@example.com", i%3 == 0)
		all = append([]string{o.ID}, all...)
	}
	list := "/o/" + org + "/test/orders"
	first := h.get(c, list)
	wantListed(t, "first page", first, all[:20]...)
	next := regexp.MustCompile(`href="([^"]+cursor=[^"]+)" rel="next"`).FindStringSubmatch(first.body)
	if next == nil {
		t.Fatalf("no link to the next page")
	}
	wantListed(t, "second page", h.get(c, strings.ReplaceAll(strings.TrimPrefix(next[1], h.d.Settings.Path), "&amp;", "&")), all[20])
	var paid []string
	for i, id := range all {
		if (20-i)%3 == 0 {
			paid = append(paid, id)
		}
	}
	wantListed(t, "status=paid", h.get(c, list+"?status=paid"), paid...)
	wantListed(t, "another event", h.get(c, list+"?event_id=evt_none"))
	loc, _ := time.LoadLocation("Asia/Yekaterinburg") // the organizer's time zone
	today := time.Now().In(loc).Format("2006-01-02")
	tomorrow := time.Now().In(loc).AddDate(0, 0, 1).Format("2006-01-02")
	wantListed(t, "created today", h.get(c, list+"?status=paid&created_after="+today+"&created_before="+today), paid...)
	wantListed(t, "created from tomorrow", h.get(c, list+"?created_after="+tomorrow))
	p := h.get(c, list+"?status=paid")
	o, _ := h.a.Sales.Orders.Order(h.ctx, ticketing.Tenant{OrganizerID: org, Environment: ticketing.EnvTest}, paid[0])
	shown := o.CreatedAt.In(loc).Format("2006-01-02 15:04:05 MST") // "+05", which the page writes &#43;05
	if !strings.Contains(p.body, strings.ReplaceAll(shown, "+", "&#43;")) {
		t.Errorf("the list does not show %s in the organizer's time zone", shown)
	}
	for _, bad := range []string{"status=sold", "created_after=31.12.2026", "created_after=" + tomorrow + "&created_before=" + today, "cursor=forged"} {
		if p := h.get(c, list+"?"+bad); p.status != http.StatusBadRequest || len(listed(p.body)) != 0 {
			t.Errorf("%s: %d, want 400", bad, p.status)
		}
	}
}

// A member who may refund sees the order's timeline, refunds it after the
// confirmation page through the ticketing service (a second refund is the
// API's 409, shown on the page), resends tickets once per form; both are in
// the audit log.
func TestOrderPage_RefundAndResend(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, org := h.owner("orders-refund@example.com", "Refunds")
	s := h.shop(org)
	o, kept, pending := s.sell("r@example.com", true), s.sell("k@example.com", true), s.sell("p@example.com", false)
	page := "/o/" + org + "/test/orders/" + o.ID
	p := h.get(c, page)
	if p.status != http.StatusOK || !strings.Contains(p.body, o.TicketNumber) || !strings.Contains(p.body, page+"/refund") {
		t.Fatalf("order page: %d\n%s", p.status, p.body)
	}
	if p := h.get(c, page+"/refund"); p.status != http.StatusOK || !strings.Contains(p.body, "1500.00 RUB") {
		t.Fatalf("confirmation page: %d\n%s", p.status, p.body)
	}
	if p := h.post(c, page+"/refund", "reason", strings.Repeat("я", ticketing.MaxRefundReason+1)); p.status != http.StatusBadRequest {
		t.Errorf("a reason too long: %d", p.status)
	}
	if p := h.post(c, page+"/refund", "reason", "asked by phone"); p.status != http.StatusSeeOther || !strings.HasSuffix(p.header.Get("Location"), page+"?done=refund") {
		t.Fatalf("refund: %d %s", p.status, p.body)
	}
	if p := h.post(c, page+"/refund"); p.status != http.StatusConflict || !strings.Contains(p.body, "in progress") {
		t.Errorf("a second refund: %d, want 409 saying a refund is in progress", p.status)
	}
	if p := h.post(c, "/o/"+org+"/test/orders/"+pending.ID+"/refund"); p.status != http.StatusConflict || !strings.Contains(p.body, "only a paid order") {
		t.Errorf("refund of a pending order: %d", p.status)
	}
	// The test provider returns the money now (the refund-outcome test helper).
	if _, err := h.a.Sales.Tests.RefundOutcome(h.ctx, ticketing.Tenant{OrganizerID: org, Environment: ticketing.EnvTest}, o.ID, "settle"); err != nil {
		t.Fatal(err)
	}
	p = h.do(c, http.MethodGet, page, nil, "Accept-Language", "en")
	if got, _ := h.a.Store.Orders.GetOrder(h.ctx, o.ID); got.Status != ticketing.OrderRefunded || *got.Refund.Reason != "asked by phone" {
		t.Fatalf("after the refund settled the order is %s", got.Status)
	}
	for _, want := range []string{"Refund started", "Money returned", "Order created", "Paid"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the timeline misses %q", want)
		}
	}

	kp := "/o/" + org + "/test/orders/" + kept.ID
	call := regexp.MustCompile(`name="call_id" value="([a-z0-9]+)"`).FindStringSubmatch(h.get(c, kp).body)
	if call == nil {
		t.Fatal("no resend form on a paid order's page")
	}
	if p := h.post(c, kp+"/resend", "call_id", call[1]); p.status != http.StatusSeeOther || !strings.HasSuffix(p.header.Get("Location"), "?done=resend") {
		t.Fatalf("resend: %d %s", p.status, p.body)
	}
	if p := h.post(c, kp+"/resend", "call_id", call[1]); !strings.HasSuffix(p.header.Get("Location"), "?done=resend_again") {
		t.Errorf("the same form twice: %d %s", p.status, p.header.Get("Location"))
	}
	if p := h.post(c, kp+"/resend", "call_id", "bad/id"); p.status != http.StatusBadRequest {
		t.Errorf("a malformed call id: %d", p.status)
	}
	if p := h.post(c, "/o/"+org+"/test/orders/"+pending.ID+"/resend", "call_id", "x1"); p.status != http.StatusConflict {
		t.Errorf("resend of a pending order: %d", p.status)
	}
	if p := h.get(c, kp); !strings.Contains(p.body, "<td>resend</td>") {
		t.Errorf("the resend email is not on the timeline")
	}
	es, _ := h.d.Accounts.Entries(h.ctx, org, 10)
	var actions []string
	for _, e := range es {
		actions = append(actions, e.Action+" "+e.Target)
	}
	if got := strings.Join(actions, ","); !strings.HasPrefix(got, "order.resend "+kept.ID+",order.refund "+o.ID+",") {
		t.Errorf("audit log %s", got)
	}
}

// Two refunds of one order posted at once: one starts it, the other is the
// API's 409; the order holds one refund and the audit log one entry.
func TestOrderPage_ConcurrentRefunds(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, org := h.owner("orders-race@example.com", "Race")
	o := h.shop(org).sell("race@example.com", true)
	path := "/o/" + org + "/test/orders/" + o.ID + "/refund"
	statuses := make(chan int, 2)
	for range 2 {
		go func() { statuses <- h.post(c, path).status }()
	}
	got := map[int]int{}
	for range 2 {
		got[<-statuses]++
	}
	if got[http.StatusSeeOther] != 1 || got[http.StatusConflict] != 1 {
		t.Fatalf("two refunds at once answered %v, want one 303 and one 409", got)
	}
	es, _ := h.d.Accounts.Entries(h.ctx, org, 10)
	refunds := 0
	for _, e := range es {
		if e.Action == "order.refund" {
			refunds++
		}
	}
	if x, _ := h.a.Store.Orders.GetOrder(h.ctx, o.ID); x.Refund == nil || refunds != 1 {
		t.Errorf("refund %+v, %d audit entries; want one of each", x.Refund, refunds)
	}
}

// Developers and viewers read orders but neither refund nor resend (403,
// nothing changes); support may; a member of organizer B reaches none of
// organizer A's orders, and A's test order is not in A's live mode.
func TestOrders_PermissionsAndTenancy(t *testing.T) {
	h := newHarness(t, nil, nil)
	ca, orgA := h.owner("orders-a@example.com", "A")
	cb, orgB := h.owner("orders-b@example.com", "B")
	o := h.shop(orgA).sell("buyer@example.com", true)
	op := "/o/" + orgA + "/test/orders/" + o.ID
	for _, role := range []account.Role{account.Developer, account.Viewer} {
		c := h.member(orgA, string(role)+"-orders@example.com", role)
		if p := h.get(c, "/o/"+orgA+"/test/orders"); p.status != http.StatusOK || !strings.Contains(p.body, o.ID) {
			t.Errorf("%s lists orders: %d", role, p.status)
		}
		if p := h.get(c, op); p.status != http.StatusOK || strings.Contains(p.body, op+"/refund") || strings.Contains(p.body, "call_id") {
			t.Errorf("%s's order page: %d, or it offers refund or resend", role, p.status)
		}
		for _, p := range []page{h.get(c, op+"/refund"), h.post(c, op+"/refund"), h.post(c, op+"/resend", "call_id", "c1")} {
			if p.status != http.StatusForbidden {
				t.Errorf("%s refunds or resends: %d, want 403", role, p.status)
			}
		}
	}
	sup := h.member(orgA, "support-orders@example.com", account.Support)
	if p := h.get(sup, op+"/refund"); p.status != http.StatusOK {
		t.Errorf("support's refund page: %d", p.status)
	}
	if p := h.post(sup, op+"/resend", "call_id", "s1"); p.status != http.StatusSeeOther {
		t.Errorf("support resends: %d", p.status)
	}
	for _, path := range []string{"/o/" + orgA + "/test/orders", op, "/o/" + orgB + "/test/orders/" + o.ID, "/o/" + orgB + "/test/orders/" + o.ID + "/refund"} {
		if p := h.get(cb, path); p.status != http.StatusNotFound || strings.Contains(p.body, "buyer@example.com") {
			t.Errorf("B GET %s: %d, want 404", path, p.status)
		}
	}
	for _, path := range []string{op + "/refund", "/o/" + orgB + "/test/orders/" + o.ID + "/refund", "/o/" + orgB + "/test/orders/" + o.ID + "/resend"} {
		if p := h.post(cb, path, "call_id", "b1"); p.status != http.StatusNotFound {
			t.Errorf("B POST %s: %d, want 404", path, p.status)
		}
	}
	if p := h.get(ca, "/o/"+orgA+"/live/orders/"+o.ID); p.status != http.StatusNotFound {
		t.Errorf("a test order in live mode: %d", p.status)
	}
	if p := h.do(ca, http.MethodPost, op+"/refund", url.Values{}, "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
		t.Errorf("a cross-site refund: %d", p.status)
	}
	if got, _ := h.a.Store.Orders.GetOrder(h.ctx, o.ID); got.Status != ticketing.OrderPaid || got.Refund != nil {
		t.Errorf("after the refused refunds the order is %s with refund %v", got.Status, got.Refund)
	}
}
