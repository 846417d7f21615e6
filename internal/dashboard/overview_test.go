package dashboard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
)

// catalogFile is a valid catalog import file: one published event with one
// 100-place tier; title names it.
func catalogFile(title string) string {
	return `{
  "events": [
    {
      "ref": "jazz",
      "status": "published",
      "title": "` + title + `",
      "slug": "jazz",
      "city": "Moscow",
      "venue": "Club Arena",
      "starts_at": "2030-03-01T19:00:00+03:00",
      "ends_at": "2030-03-01T22:00:00+03:00",
      "timezone": "Europe/Moscow",
      "tiers": [
        {"ref": "floor", "name": "Floor", "price": 250000, "capacity": 100}
      ]
    }
  ]
}`
}

// badCatalog has a negative price on line 14 and a misspelt field on line 6.
var badCatalog = strings.Replace(strings.Replace(catalogFile("Broken"), `"price": 250000`, `"price": -5`, 1), `"title"`, `"titel"`, 1)

// upload posts a file as the catalog form does (multipart, field "file").
func (h *harness) upload(c *http.Client, path, name, content string) page {
	h.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		h.t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	req, err := http.NewRequestWithContext(h.ctx, http.MethodPost, h.url(path), &b)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, body: string(body), header: resp.Header}
}

// importedTier imports the catalog through the dashboard and returns its tier.
func (h *harness) importedTier(c *http.Client, org string) ticketing.Tier {
	h.t.Helper()
	if p := h.upload(c, "/o/"+org+"/test/catalog", "jazz.json", catalogFile("Jazz Night")); p.status != http.StatusOK || !strings.Contains(p.body, "Jazz Night") {
		h.t.Fatalf("import: %d %s", p.status, p.body)
	}
	return h.onlyEvent(org).Tiers[0]
}

// onlyEvent is the organizer's one event.
func (h *harness) onlyEvent(org string) *ticketing.Event {
	h.t.Helper()
	page, err := h.a.Store.Catalog.ListEvents(h.ctx, ticketing.EventQuery{OrganizerID: org, Environment: ticketing.EnvTest, Limit: 5, Scope: ticketing.ScopeAll})
	if err != nil || len(page.Events) != 1 {
		h.t.Fatalf("the organizer's events: %v %v", page, err)
	}
	return page.Events[0].Event
}

// order creates a test order of qty units through the sales service, paid or not.
func (h *harness) order(org string, tier ticketing.Tier, qty int, pay bool) *ticketing.Order {
	h.t.Helper()
	email := "buyer@example.com"
	c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: org, Environment: ticketing.EnvTest}, KeyID: "key_dash"}
	res, err := h.a.Sales.Orders.CreateOrder(h.ctx, c, fmt.Sprintf("dash-%s-%d-%v", tier.ID, qty, pay),
		ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier.ID, Quantity: &qty})
	if err != nil {
		h.t.Fatal(err)
	}
	if !pay {
		return res.Order
	}
	o, err := h.a.Sales.Orders.Simulate(h.ctx, c.Tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil {
		h.t.Fatal(err)
	}
	return o
}

type chartJSON struct {
	T       []int64 `json:"t"`
	Created []int   `json:"created"`
	Paid    []int   `json:"paid"`
}

func (h *harness) chart(c *http.Client, org, env string) (created, paid, minutes int) {
	h.t.Helper()
	p := h.get(c, "/o/"+org+"/"+env+"/overview/orders.json")
	var d chartJSON
	if p.status != http.StatusOK || p.header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(p.body), &d) != nil {
		h.t.Fatalf("orders.json: %d %s", p.status, p.body)
	}
	for i := range d.T {
		created += d.Created[i]
		paid += d.Paid[i]
	}
	return created, paid, len(d.T)
}

// The overview shows today's paid sales per event against its capacity,
// and the chart's JSON counts the last hour's orders per minute, per mode.
func TestOverview_TodaysSalesAndOrdersPerMinute(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, org := h.owner("overview@example.com", "Overview Org")
	if p := h.get(c, "/o/"+org+"/test/"); p.status != http.StatusOK || !strings.Contains(p.body, `id="orders-chart"`) || strings.Contains(p.body, "Jazz Night") {
		t.Fatalf("overview before any sale: %d\n%s", p.status, p.body)
	}
	tier := h.importedTier(c, org)
	paid := h.order(org, tier, 2, true)
	h.order(org, tier, 1, false)

	p := h.get(c, "/o/"+org+"/test/")
	if p.status != http.StatusOK {
		t.Fatalf("overview: %d %s", p.status, p.body)
	}
	tp := paid.TotalPrice // between 1,000 and 999,999.99 roubles
	for _, want := range []string{"Jazz Night", "<td>2</td>", "3 / 100", fmt.Sprintf("%d\u00a0%03d.%02d RUB", tp/100000, tp/100%1000, tp%100)} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the overview lacks %q:\n%s", want, p.body)
		}
	}
	if created, paidN, minutes := h.chart(c, org, "test"); created != 2 || paidN != 1 || minutes != 61 {
		t.Errorf("test chart: %d created, %d paid over %d minutes; want 2, 1, 61", created, paidN, minutes)
	}
	if created, paidN, _ := h.chart(c, org, "live"); created != 0 || paidN != 0 {
		t.Errorf("live chart counts test orders: %d created, %d paid", created, paidN)
	}
	if p := h.get(c, "/o/"+org+"/live/"); strings.Contains(p.body, "Jazz Night") {
		t.Errorf("the live overview shows test sales")
	}
}

// The Events page lists each tier's capacity, sold, held, available and
// revenue; a file with problems is refused with each problem beside its
// line and nothing written; a valid one is imported (as tixctl would) and
// audited.
func TestEvents_TiersAndCatalogUpload(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, org := h.owner("events@example.com", "Events Org")
	tier := h.importedTier(c, org)
	h.order(org, tier, 2, true)
	h.order(org, tier, 1, false)
	p := h.get(c, "/o/"+org+"/test/events")
	row := `<th scope="row">Floor</th><td>2` // the price follows, then the counts
	if p.status != http.StatusOK || !strings.Contains(p.body, row) ||
		!strings.Contains(p.body, "<td>100</td><td>3</td><td>0</td><td>97</td><td>5\u00a0000.00 RUB</td>") {
		t.Fatalf("events page: %d\n%s", p.status, p.body)
	}

	p = h.upload(c, "/o/"+org+"/test/catalog", "broken.json", badCatalog)
	if p.status != http.StatusBadRequest {
		t.Fatalf("a broken file: %d %s", p.status, p.body)
	}
	for _, want := range []string{`id="line-14"`, `<code>events[0].tiers[0].price</code>`, `id="line-6"`, `<code>events[0].titel</code>`, "-5"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the problems lack %q:\n%s", want, p.body)
		}
	}
	ev, err := h.a.Store.Catalog.GetCatalogEvent(h.ctx, org, h.onlyEvent(org).ID)
	if err != nil || ev.Title != "Jazz Night" || ev.Tiers[0].Price != 250000 {
		t.Fatalf("the event after a refused file: %+v %v", ev, err)
	}

	if p := h.upload(c, "/o/"+org+"/test/catalog", "renamed.json", catalogFile("Jazz Night II")); p.status != http.StatusOK {
		t.Fatalf("the corrected file: %d %s", p.status, p.body)
	}
	if ev, _ := h.a.Store.Catalog.GetCatalogEvent(h.ctx, org, ev.ID); ev.Title != "Jazz Night II" {
		t.Errorf("the event after the import is %q", ev.Title)
	}
	es, err := h.d.Accounts.Entries(h.ctx, org, 10)
	if err != nil || len(es) == 0 || es[0].Action != "catalog.import" || es[0].Actor != "events@example.com" || es[0].Target != "renamed.json" || es[0].Detail != "1 events" {
		t.Errorf("the audit log's last entry: %+v %v", es, err)
	}
	if p := h.upload(c, "/o/"+org+"/test/catalog", "big.json", strings.Repeat(" ", 5<<20+100)); p.status != http.StatusBadRequest || !strings.Contains(p.body, "Файл больше 5 МБ") {
		t.Errorf("a file over 5 MB: %d", p.status)
	}
}

// Every role reads the Events page; only owners and developers import a
// catalog (viewer and support get 403 and no form); another organizer's
// member gets 404 for the events, the upload and the chart's data.
func TestEvents_PermissionsAndOtherOrganizer(t *testing.T) {
	h := newHarness(t, nil, nil)
	owner, org := h.owner("perm-owner@example.com", "Perm Org")
	h.importedTier(owner, org)
	for _, role := range []account.Role{account.Viewer, account.Support, account.Developer} {
		c := h.member(org, "perm-"+string(role)+"@example.com", role)
		p := h.get(c, "/o/"+org+"/test/events")
		canImport := role == account.Developer
		if p.status != http.StatusOK || !strings.Contains(p.body, "Jazz Night") || strings.Contains(p.body, `/catalog"`) != canImport {
			t.Errorf("%s on the Events page: %d, upload form %v", role, p.status, strings.Contains(p.body, `/catalog"`))
		}
		p = h.upload(c, "/o/"+org+"/test/catalog", "by-"+string(role)+".json", catalogFile("By "+string(role)))
		if want := map[bool]int{true: http.StatusOK, false: http.StatusForbidden}[canImport]; p.status != want {
			t.Errorf("%s imports: %d, want %d", role, p.status, want)
		}
		if p := h.get(c, "/o/"+org+"/test/"); p.status != http.StatusOK {
			t.Errorf("%s on the overview: %d", role, p.status)
		}
	}
	ev, _ := h.a.Store.Catalog.GetCatalogEvent(h.ctx, org, h.onlyEvent(org).ID)
	if ev.Title != "By developer" {
		t.Errorf("the event is %q: only the developer's import may have changed it", ev.Title)
	}

	other, _ := h.owner("perm-other@example.com", "Other Org")
	for _, p := range []page{
		h.get(other, "/o/"+org+"/test/events"),
		h.get(other, "/o/"+org+"/test/overview/orders.json"),
		h.upload(other, "/o/"+org+"/test/catalog", "x.json", catalogFile("Taken over")),
	} {
		if p.status != http.StatusNotFound || strings.Contains(p.body, "By developer") {
			t.Errorf("another organizer's member: %d", p.status)
		}
	}
	if p := h.get(h.client(), "/o/"+org+"/test/overview/orders.json"); p.status != http.StatusSeeOther {
		t.Errorf("signed out, the chart's data answers %d", p.status)
	}
	if ev, _ := h.a.Store.Catalog.GetCatalogEvent(h.ctx, org, ev.ID); ev.Title != "By developer" {
		t.Errorf("another organizer changed the event to %q", ev.Title)
	}
}

// The Events page shows each event's door: tickets sold, admitted and
// refunded, and admitted per gate, as the API's check-in stats count them.
func TestEvents_DoorCounts(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, org := h.owner("door@example.com", "Door Org")
	tier := h.importedTier(c, org)
	o := h.order(org, tier, 3, true)
	tenant := ticketing.Tenant{OrganizerID: org, Environment: ticketing.EnvTest}
	for i, gate := range []string{"north", "south", "north"} {
		res, err := h.a.CheckIns.Scan(h.ctx, tenant, ticketing.Scan{Code: o.Tickets[i].Number, Gate: gate, KeyID: "key_dash"})
		if err != nil || res.Result != ticketing.ResultAdmitted {
			t.Fatalf("scan: %+v %v", res, err)
		}
	}
	h.order(org, tier, 1, true)
	p := h.get(c, "/o/"+org+"/test/events")
	want := "<strong>На входе</strong>: продано 4 · прошли 3 · возвращено 0 · по входам: north 2, south 1"
	if p.status != http.StatusOK || !strings.Contains(p.body, want) {
		t.Fatalf("events page lacks %q: %d\n%s", want, p.status, p.body)
	}
}
