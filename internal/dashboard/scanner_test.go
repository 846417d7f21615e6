package dashboard_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/dashboard/scanner"
	"tix/internal/testenv"
	"tix/internal/ticketcode"
	"tix/internal/ticketing"
)

// scannerDoor is an organizer with one event (Jazz Night, tier Floor), a
// door key bound to it and the dashboard serving the scanner.
type scannerDoor struct {
	*harness
	org    string
	event  *ticketing.Event
	key    auth.Key
	secret string
}

func newScannerDoor(t *testing.T) *scannerDoor {
	t.Helper()
	h := newHarness(t, nil, nil)
	c, org := h.owner("door-owner@example.com", "Door Concerts")
	if p := h.upload(c, "/o/"+org+"/test/catalog", "jazz.json", catalogFile("Jazz Night")); p.status != http.StatusOK {
		t.Fatalf("catalog: %d", p.status)
	}
	d := &scannerDoor{harness: h, org: org, event: h.onlyEvent(org)}
	d.key, d.secret = d.newKey(t, []string{auth.ScopeCheckinsWrite}, []string{d.event.ID})
	return d
}

func (d *scannerDoor) newKey(t *testing.T, scopes, events []string) (auth.Key, string) {
	t.Helper()
	k, secret, hash, err := auth.NewKey(auth.KeyRequest{OrganizerID: d.org, Type: auth.Secret, Environment: ticketing.EnvTest,
		Name: "north door", Scopes: scopes, Events: events}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.a.Store.Keys.CreateKey(d.ctx, k, hash); err != nil {
		t.Fatal(err)
	}
	return k, secret
}

// codes are a paid order's signed codes: the order's and each ticket's.
func (d *scannerDoor) codes(t *testing.T, o *ticketing.Order) (string, map[string]string) {
	t.Helper()
	orderCode, codes, err := d.a.TicketKeys.TicketCodes(d.ctx, o)
	if err != nil || len(codes) == 0 {
		t.Fatalf("ticket codes: %v %v", codes, err)
	}
	return orderCode, codes
}

var csrfRe = regexp.MustCompile(`data-csrf="([^"]+)"`)

// signIn signs a new browser-like client in with secret; it returns the
// client and the page's CSRF token.
func (d *scannerDoor) signIn(t *testing.T, secret string) (*http.Client, string) {
	t.Helper()
	c := d.client()
	if p := d.post(c, "/scanner/signin", "key", secret); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", p.status, p.body)
	}
	p := d.get(c, "/scanner/")
	m := csrfRe.FindStringSubmatch(p.body)
	if p.status != http.StatusOK || m == nil {
		t.Fatalf("the scanner page: %d %s", p.status, p.body)
	}
	return c, m[1]
}

// scan posts a scan as the page does.
func (d *scannerDoor) scan(t *testing.T, c *http.Client, csrf string, body map[string]string) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(d.ctx, http.MethodPost, d.url("/scanner/api/check-ins"), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if csrf != "" {
		req.Header.Set("X-Tix-Scanner-Csrf", csrf)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("scan answer %d: %s", res.StatusCode, raw)
	}
	return res.StatusCode, out
}

// Signing the scanner in takes a secret key with checkins:write: a
// malformed, unknown, publishable or order-scoped key is refused with what
// to do; the session cookie is HttpOnly, SameSite=Strict, limited to the
// scanner's path, and holds neither the secret nor its hash; the page lists
// the key's event and answers under the dashboard's CSP.
func TestScanner_SignInTakesACheckInKey(t *testing.T) {
	d := newScannerDoor(t)
	_, orders := d.newKey(t, []string{auth.ScopeOrdersRead}, nil)
	for _, c := range []struct{ secret, want string }{
		{"nonsense", "sk_test_"},
		{auth.NewSecret(auth.Secret, ticketing.EnvTest), "no such key"},
		{orders, "checkins:write"},
	} {
		p := d.do(d.client(), http.MethodPost, "/scanner/signin", url.Values{"key": {c.secret}}, "Accept-Language", "en")
		if p.status != http.StatusUnauthorized || !strings.Contains(p.body, c.want) {
			t.Errorf("sign in with %q: %d, want 401 saying %q:\n%s", c.secret, p.status, c.want, p.body)
		}
	}
	if p := d.get(d.client(), "/scanner/"); p.status != http.StatusOK || !strings.Contains(p.body, `name="key"`) {
		t.Errorf("signed out, the scanner shows its sign-in form: %d", p.status)
	}

	c := d.client()
	p := d.do(c, http.MethodPost, "/scanner/signin", url.Values{"key": {d.secret}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", p.status, p.body)
	}
	set := p.header.Get("Set-Cookie")
	hash := auth.Hash(d.secret)
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/dashboard/scanner/"} {
		if !strings.Contains(set, want) {
			t.Errorf("the session cookie lacks %s: %s", want, set)
		}
	}
	if strings.Contains(set, d.secret) || strings.Contains(set, hash) || strings.Contains(set, d.secret[8:]) {
		t.Errorf("the session cookie carries the key: %s", set)
	}
	page := d.get(c, "/scanner/")
	if page.status != http.StatusOK || !strings.Contains(page.body, d.event.ID) || !strings.Contains(page.body, "Jazz Night") ||
		strings.Contains(page.body, d.secret) {
		t.Errorf("the scanner page: %d\n%s", page.status, page.body)
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("the scanner page's CSP: %q", csp)
	}
	if p := d.get(c, "/scanner"); p.status != http.StatusMovedPermanently || p.header.Get("Location") != "/dashboard/scanner/" {
		t.Errorf("/scanner without its slash: %d %s", p.status, p.header.Get("Location"))
	}
	out := d.post(c, "/scanner/signout")
	if out.status != http.StatusSeeOther || !strings.Contains(out.header.Get("Set-Cookie"), "Max-Age=0") || out.header.Get("Clear-Site-Data") == "" {
		t.Errorf("sign out: %d, Set-Cookie %q, Clear-Site-Data %q", out.status, out.header.Get("Set-Cookie"), out.header.Get("Clear-Site-Data"))
	}
	if p := d.get(c, "/scanner/"); !strings.Contains(p.body, `name="key"`) {
		t.Errorf("signed out, the page is not the sign-in form")
	}
}

// A scan from the page goes through ticketing.CheckIns as POST
// /v1/check-ins does: admitted once, then already admitted with the first
// scan's gate and time; a typed number admits its ticket, an altered code is
// invalid, a missing gate is invalid_request. The JSON endpoints refuse a
// request without the session's CSRF token, or from another site.
func TestScanner_ScansAdmitOnce(t *testing.T) {
	d := newScannerDoor(t)
	o := d.order(d.org, d.event.Tiers[0], 2, true)
	_, codes := d.codes(t, o)
	var numbers []string
	for n := range codes {
		numbers = append(numbers, n)
	}
	c, csrf := d.signIn(t, d.secret)

	if st, out := d.scan(t, c, "", map[string]string{"code": codes[numbers[0]], "gate": "north"}); st != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d %v", st, out)
	}
	if st, out := d.scan(t, d.client(), csrf, map[string]string{"code": codes[numbers[0]], "gate": "north"}); st != http.StatusUnauthorized {
		t.Errorf("without the session: %d %v", st, out)
	}
	if p := d.do(c, http.MethodPost, "/scanner/api/check-ins", nil, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site",
		"X-Tix-Scanner-Csrf", csrf, "Content-Type", "application/json"); p.status != http.StatusForbidden {
		t.Errorf("from another site: %d", p.status)
	}

	st, first := d.scan(t, c, csrf, map[string]string{"code": codes[numbers[0]], "gate": "north", "event_id": d.event.ID})
	if st != http.StatusOK || first["result"] != ticketing.ResultAdmitted || first["ticket_number"] != numbers[0] {
		t.Fatalf("first scan: %d %v", st, first)
	}
	st, again := d.scan(t, c, csrf, map[string]string{"code": codes[numbers[0]], "gate": "south"})
	ci, _ := again["check_in"].(map[string]any)
	if st != http.StatusOK || again["result"] != ticketing.ResultAlreadyAdmitted || ci["gate"] != "north" || ci["at"] == "" {
		t.Errorf("second scan: %d %v", st, again)
	}
	// The API's service agrees: the ticket is admitted.
	res, err := d.a.CheckIns.Scan(d.ctx, ticketing.Tenant{OrganizerID: d.org, Environment: ticketing.EnvTest},
		ticketing.Scan{Code: numbers[0], Gate: "api", KeyID: d.key.ID})
	if err != nil || res.Result != ticketing.ResultAlreadyAdmitted {
		t.Errorf("the API's check-in of the scanned ticket: %+v %v", res, err)
	}
	if _, typed := d.scan(t, c, csrf, map[string]string{"code": strings.ToLower(numbers[1]), "gate": "north"}); typed["result"] != ticketing.ResultAdmitted {
		t.Errorf("a typed number: %v", typed)
	}
	altered := strings.Replace(codes[numbers[0]], d.event.ID, d.event.ID+"x", 1)
	if _, bad := d.scan(t, c, csrf, map[string]string{"code": altered, "gate": "north"}); bad["result"] != ticketing.ResultInvalid {
		t.Errorf("an altered code: %v", bad)
	}
	st, noGate := d.scan(t, c, csrf, map[string]string{"code": codes[numbers[0]]})
	if e, _ := noGate["error"].(map[string]any); st != http.StatusBadRequest || e["code"] != "invalid_request" || e["param"] != "gate" {
		t.Errorf("no gate: %d %v", st, noGate)
	}
	if p := d.do(c, http.MethodPost, "/scanner/api/check-ins", nil, "X-Tix-Scanner-Csrf", csrf); p.status != http.StatusBadRequest {
		t.Errorf("no body: %d %s", p.status, p.body)
	}
}

// Revoking the key signs its scanners out at once: the page shows the
// sign-in form again and the JSON endpoints answer 401.
func TestScanner_RevokedKeySignsOut(t *testing.T) {
	d := newScannerDoor(t)
	c, csrf := d.signIn(t, d.secret)
	if _, err := d.a.Store.Keys.RevokeKey(d.ctx, d.key.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if st, out := d.scan(t, c, csrf, map[string]string{"code": "TIX-AAAAAA", "gate": "north"}); st != http.StatusUnauthorized {
		t.Errorf("a revoked key's scan: %d %v", st, out)
	}
	if p := d.get(c, "/scanner/"); !strings.Contains(p.body, `name="key"`) {
		t.Errorf("a revoked key's page is not the sign-in form")
	}
}

// The scanner's QR decoder is the npm package jsqr pinned in
// scripts/package.json, byte for byte; its service worker is served at the
// scanner's root as JavaScript.
func TestScanner_EmbeddedDecoderIsThePinnedPackage(t *testing.T) {
	d := newScannerDoor(t)
	p := d.get(d.client(), "/scanner/static/jsQR.js")
	want, err := os.ReadFile(filepath.Join(testenv.PinnedNPM(t, "jsqr", scanner.JSQRVersion), "dist", "jsQR.js"))
	if err != nil {
		t.Fatal(err)
	}
	if p.status != http.StatusOK || p.body != string(want) || !strings.HasPrefix(p.header.Get("Content-Type"), "text/javascript") {
		t.Errorf("jsQR.js: %d, %d bytes (npm: %d), %s", p.status, len(p.body), len(want), p.header.Get("Content-Type"))
	}
	if sw := d.get(d.client(), "/scanner/sw.js"); sw.status != http.StatusOK || !strings.Contains(sw.body, "caches.open") ||
		!strings.HasPrefix(sw.header.Get("Content-Type"), "text/javascript") {
		t.Errorf("sw.js: %d %s", sw.status, sw.header.Get("Content-Type"))
	}
}

// call sends a JSON request as the page does and decodes the answer.
func (d *scannerDoor) call(t *testing.T, c *http.Client, csrf, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(d.ctx, method, d.url(path), rd)
	req.Header.Set("X-Tix-Scanner-Csrf", csrf)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

// The page's offline door goes through the same service as the API's: the
// admission list it downloads is the signed page (it verifies with the
// organizer's JWK set, which the scanner also serves), another event than
// the key's is not found, and an uploaded offline scan is merged as POST
// /v1/check-ins/batch merges it (a re-upload changes nothing).
func TestScanner_AdmissionListAndBatch(t *testing.T) {
	d := newScannerDoor(t)
	o := d.order(d.org, d.event.Tiers[0], 2, true)
	_, codes := d.codes(t, o)
	c, csrf := d.signIn(t, d.secret)

	st, raw := d.call(t, c, csrf, http.MethodGet, "/scanner/api/ticket-keys", nil)
	var jwks ticketcode.JWKS
	if st != http.StatusOK || json.Unmarshal(raw, &jwks) != nil || len(jwks.Keys) == 0 {
		t.Fatalf("ticket keys: %d %s", st, raw)
	}
	set := ticketcode.FromJWKS(jwks)
	st, raw = d.call(t, c, csrf, http.MethodGet, "/scanner/api/admission-list?event_id="+d.event.ID, nil)
	var page ticketcode.AdmissionPage
	if st != http.StatusOK || json.Unmarshal(raw, &page) != nil || len(page.Data) != 2 {
		t.Fatalf("admission list: %d %s", st, raw)
	}
	if err := ticketcode.VerifyAdmissionPage(&page, set, time.Now()); err != nil {
		t.Errorf("the page's list does not verify: %v", err)
	}
	if st, raw := d.call(t, c, csrf, http.MethodGet, "/scanner/api/admission-list?event_id=evt_other", nil); st != http.StatusNotFound {
		t.Errorf("another event's list: %d %s", st, raw)
	}

	var number string
	for n := range codes {
		number = n
	}
	at := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	body := map[string]any{"gate": "north", "event_id": d.event.ID,
		"scans": []map[string]string{{"client_scan_id": "scn-test:000001", "code": codes[number], "scanned_at": at, "gate": "north"}}}
	for _, want := range []string{ticketing.ResultAdmitted, ticketing.ResultAdmitted} {
		st, raw := d.call(t, c, csrf, http.MethodPost, "/scanner/api/check-ins/batch", body)
		var out struct {
			Data []struct {
				ClientScanID string `json:"client_scan_id"`
				Result       string `json:"result"`
			} `json:"data"`
		}
		if st != http.StatusOK || json.Unmarshal(raw, &out) != nil || len(out.Data) != 1 || out.Data[0].Result != want ||
			out.Data[0].ClientScanID != "scn-test:000001" {
			t.Errorf("batch: %d %s, want %s", st, raw, want)
		}
	}
	if st := d.stats(t); st.Admitted != 1 || st.Gates["north"] != 1 {
		t.Errorf("after the upload: %+v", st)
	}
	body["scans"] = []map[string]string{{"client_scan_id": "scn-test:000002", "code": codes[number], "scanned_at": "yesterday"}}
	if st, raw := d.call(t, c, csrf, http.MethodPost, "/scanner/api/check-ins/batch", body); st != http.StatusBadRequest ||
		!strings.Contains(string(raw), "invalid_request") {
		t.Errorf("a malformed time: %d %s", st, raw)
	}
}

// seriesCatalog is a weekly series of two evenings.
const seriesCatalog = `{"events": [{"ref": "weekly", "status": "published", "title": "Weekly Quartet", "city": "Moscow",
  "venue": "Club", "kind": "recurring", "timezone": "Europe/Moscow",
  "tiers": [{"ref": "floor", "name": "Floor", "price": 100000, "capacity": 50}],
  "occurrences": [{"ref": "w1", "starts_at": "2030-05-01T19:00:00+03:00", "ends_at": "2030-05-01T22:00:00+03:00"},
                  {"ref": "w2", "starts_at": "2030-05-08T19:00:00+03:00", "ends_at": "2030-05-08T22:00:00+03:00"}]}]}`

// A series' door is one of its evenings: the page offers each occurrence,
// and a ticket of next week's evening scanned at tonight's door is the
// wrong event, online as through the API.
func TestScanner_SeriesDoorIsOneOccurrence(t *testing.T) {
	d := newScannerDoor(t)
	c := d.client()
	d.harness.signIn(c, "door-owner@example.com", password)
	if p := d.upload(c, "/o/"+d.org+"/test/catalog", "weekly.json", seriesCatalog); p.status != http.StatusOK {
		t.Fatalf("catalog: %d", p.status)
	}
	page, err := d.a.Store.Catalog.ListEvents(d.ctx, ticketing.EventQuery{OrganizerID: d.org, Environment: ticketing.EnvTest, Limit: 5, Scope: ticketing.ScopeAll, Q: "Quartet"})
	if err != nil || len(page.Events) != 1 || len(page.Events[0].Event.Occurrences) != 2 {
		t.Fatalf("the series: %+v %v", page, err)
	}
	series := page.Events[0].Event
	w1, w2 := series.Occurrences[0].ID, series.Occurrences[1].ID
	email, qty := "weekly@example.com", 1
	caller := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: d.org, Environment: ticketing.EnvTest}, KeyID: "key_dash"}
	res, err := d.a.Sales.Orders.CreateOrder(d.ctx, caller, "weekly-w2", ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email},
		TierID: &series.Tiers[0].ID, Quantity: &qty, EventID: &series.ID, OccurrenceID: &w2})
	if err != nil {
		t.Fatal(err)
	}
	o, err := d.a.Sales.Orders.Simulate(d.ctx, caller.Tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil {
		t.Fatal(err)
	}
	_, codes := d.codes(t, o)
	_, secret := d.newKey(t, []string{auth.ScopeCheckinsWrite}, []string{series.ID})
	sc, csrf := d.signIn(t, secret)
	p := d.get(sc, "/scanner/")
	for _, occ := range []string{w1, w2} {
		if !strings.Contains(p.body, `value="`+series.ID+"|"+occ+`"`) {
			t.Errorf("the page does not offer the evening %s:\n%s", occ, p.body)
		}
	}
	for _, code := range codes {
		if _, out := d.scan(t, sc, csrf, map[string]string{"code": code, "gate": "north", "event_id": series.ID, "occurrence_id": w1}); out["result"] != ticketing.ResultWrongEvent {
			t.Errorf("next week's ticket at tonight's door: %v", out)
		}
		if _, out := d.scan(t, sc, csrf, map[string]string{"code": code, "gate": "north", "event_id": series.ID, "occurrence_id": w2}); out["result"] != ticketing.ResultAdmitted {
			t.Errorf("the ticket at its evening's door: %v", out)
		}
	}
}
