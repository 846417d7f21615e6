package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/emailsend/emailtest"
	"tix/internal/ticketing"
)

// transferAPI calls the local stack's API over HTTP with a test secret key.
type transferAPI struct {
	t   *testing.T
	url string // .../v1
	sk  string
}

func (c transferAPI) call(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.sk)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return res.StatusCode, m
}

// checkIn scans code at gate north and returns the door's result.
func (c transferAPI) checkIn(code string) string {
	c.t.Helper()
	b, _ := json.Marshal(map[string]string{"code": code, "gate": "north"})
	status, m := c.call("POST", "/check-ins", string(b))
	if status != http.StatusOK {
		c.t.Fatalf("POST /check-ins: %d %v", status, m)
	}
	r, _ := m["result"].(string)
	return r
}

// page fetches the accept page (GET) or posts its form (POST).
func page(t *testing.T, method, link string, form url.Values) (int, string, http.Header) {
	t.Helper()
	var res *http.Response
	var err error
	if method == "POST" {
		res, err = http.PostForm(link, form)
	} else {
		res, err = http.Get(link)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

var acceptLink = regexp.MustCompile(`https?://\S+/v1/transfers/trf_\w+/accept\?token=[\w%-]+`)

// A transfer end to end on the local stack (DynamoDB Local, fauxqs, the
// deliveries consumer, SMTP into MailDev, the API over HTTP): the buyer's
// ticket is offered to a recipient, whose email in the local inbox carries
// the accept link; the link's page accepts it over HTTP, once. Then the old
// code is refused at the door (transferred) and the new one, from the
// recipient's tickets email, is admitted; the old ticket shows transferred;
// refunds are refused as the contract says: 409 while the transfer was
// pending and after it, 422 unsupported for the transferred-in order.
func TestTransfer_EndToEnd(t *testing.T) {
	var mu sync.RWMutex
	handler := http.NotFoundHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.RLock()
		h := handler
		mu.RUnlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	m := newMailStack(t, map[string]string{"TIX_PUBLIC_URL": srv.URL})
	ctx, a, inbox := m.ctx, m.app, m.inbox
	mu.Lock()
	handler = a.Server.Handler()
	mu.Unlock()
	sk := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	if err := a.Store.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_mail", Type: auth.Secret, Environment: ticketing.EnvTest,
		Scopes: auth.AllScopes, Last4: sk[len(sk)-4:], CreatedAt: time.Now().UTC()}, auth.Hash(sk)); err != nil {
		t.Fatal(err)
	}
	api := transferAPI{t: t, url: srv.URL + "/v1", sk: sk}
	buyer, recipient := emailtest.NewAddress("buyer"), emailtest.NewAddress("friend")
	for _, addr := range []string{buyer, recipient} { // test mode mails the organizer's own addresses only
		if _, err := a.Store.Emails.AddTestRecipient(ctx, "org_mail", addr); err != nil {
			t.Fatal(err)
		}
	}
	paid := m.paidOrder(t, buyer, 2)
	status, tickets := api.call("GET", "/orders/"+paid.ID+"/tickets", "")
	if status != http.StatusOK {
		t.Fatalf("GET tickets: %d %v", status, tickets)
	}
	first := tickets["tickets"].([]any)[0].(map[string]any)
	oldNumber, oldCode := first["ticket_number"].(string), first["qr_payload"].(string)

	status, tr := api.call("POST", "/tickets/"+oldNumber+"/transfers", `{"to":{"email":"`+recipient+`","name":"Anna"}}`)
	if status != http.StatusCreated || tr["status"] != "pending" || tr["ticket_number"] != oldNumber {
		t.Fatalf("POST transfers: %d %v", status, tr)
	}
	trID := tr["id"].(string)
	if status, again := api.call("POST", "/tickets/"+oldNumber+"/transfers", `{"to":{"email":"`+recipient+`"}}`); status != http.StatusConflict {
		t.Errorf("a second transfer of a ticket with one pending: %d %v, want 409", status, again)
	}
	if status, body := api.call("POST", "/orders/"+paid.ID+"/refund", `{}`); status != http.StatusConflict {
		t.Errorf("refund while a transfer is pending: %d %v, want 409", status, body)
	}

	raw, err := inbox.Raw(ctx, recipient, 20*time.Second)
	if err != nil {
		t.Fatalf("the offer did not reach the recipient's inbox: %v", err)
	}
	offer, err := emailtest.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	link := acceptLink.FindString(offer.Text)
	if link == "" || !strings.Contains(offer.Subject, "Jazz Night") || offer.Header.Get("X-Tix-Kind") != "transfer" {
		t.Fatalf("offer: subject %q, kind %q, no accept link in:\n%s", offer.Subject, offer.Header.Get("X-Tix-Kind"), offer.Text)
	}
	token, _ := url.Parse(link)
	code, body, hdr := page(t, "GET", link, nil)
	if code != http.StatusOK || !strings.Contains(body, oldNumber) || !strings.Contains(body, `<form method="post"`) ||
		hdr.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("accept page: %d %v\n%s", code, hdr, body)
	}
	if code, body, _ := page(t, "POST", srv.URL+token.Path, url.Values{"token": {"not-the-secret"}}); code != http.StatusNotFound {
		t.Errorf("accept with a wrong secret: %d\n%s", code, body)
	}
	code, body, _ = page(t, "POST", srv.URL+token.Path, url.Values{"token": {token.Query().Get("token")}})
	if code != http.StatusOK || !strings.Contains(body, "The ticket is yours") {
		t.Fatalf("accept: %d\n%s", code, body)
	}
	if code, body, _ := page(t, "POST", srv.URL+token.Path, url.Values{"token": {token.Query().Get("token")}}); code != http.StatusConflict {
		t.Errorf("the link accepted twice: %d\n%s", code, body)
	}

	status, tr = api.call("GET", "/transfers/"+trID, "")
	newOrder, _ := tr["new_order_id"].(string)
	newNumber, _ := tr["new_ticket_number"].(string)
	if status != http.StatusOK || tr["status"] != "accepted" || newOrder == "" || newNumber == "" || newNumber == oldNumber {
		t.Fatalf("GET transfer: %d %v", status, tr)
	}
	_, tickets = api.call("GET", "/orders/"+paid.ID+"/tickets", "")
	if st := tickets["tickets"].([]any)[0].(map[string]any)["status"]; st != ticketing.TicketTransferred {
		t.Errorf("old ticket status %v, want transferred", st)
	}

	// The recipient's tickets email (after the offer) carries the new code.
	raws, err := inbox.RawAll(ctx, recipient, 2, 20*time.Second)
	if err != nil {
		t.Fatalf("the new ticket did not reach the recipient: %v", err)
	}
	var newCode string
	for _, r := range raws {
		p, err := emailtest.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		if p.Header.Get("X-Tix-Kind") == "tickets" && p.Header.Get("X-Tix-Order") == newOrder && len(p.Inline) == 1 {
			if newCode, err = emailtest.DecodeQR(p.Inline[0].Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !strings.Contains(newCode, newNumber) {
		t.Fatalf("no tickets email to the recipient with ticket %s's code (got %q)", newNumber, newCode)
	}

	// Before the new ticket is used (a used ticket's order is 409 first).
	status, refused := api.call("POST", "/orders/"+newOrder+"/refund", `{}`)
	if e, _ := refused["error"].(map[string]any); status != http.StatusUnprocessableEntity || e["code"] != "unsupported" {
		t.Errorf("refund of the transferred-in order: %d %v, want 422 unsupported", status, refused)
	}

	if got := api.checkIn(oldCode); got != ticketing.ResultTransferred {
		t.Errorf("the old code at the door: %s, want transferred", got)
	}
	if got := api.checkIn(oldNumber); got != ticketing.ResultTransferred {
		t.Errorf("the old number typed at the door: %s, want transferred", got)
	}
	if got := api.checkIn(newCode); got != ticketing.ResultAdmitted {
		t.Errorf("the new code at the door: %s, want admitted", got)
	}

	if status, body := api.call("POST", "/orders/"+paid.ID+"/refund", `{}`); status != http.StatusConflict {
		t.Errorf("refund after a ticket was transferred: %d %v, want 409", status, body)
	}
}
