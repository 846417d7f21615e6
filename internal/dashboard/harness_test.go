package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/app/dash"
	"tix/internal/app/sending"
	"tix/internal/config"
	"tix/internal/dashboard"
	"tix/internal/dashboard/account"
	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// harness is the dashboard over a whole app (a fresh table and queues on
// the emulators), served by a real HTTP server on loopback; the account
// emails go through the app's email pipeline to MailDev, and each link is
// also recorded as it is written.
type harness struct {
	t     *testing.T
	a     *app.App
	d     *dashboard.Server
	srv   *httptest.Server
	links *linkRecorder
	ctx   context.Context
}

// linkRecorder remembers each account email's link, and sends it on.
type linkRecorder struct {
	dashboard.Mailer
	mu    sync.Mutex
	links map[string][]string // address -> links, oldest first
}

func (l *linkRecorder) AccountEmail(ctx context.Context, org, to, cause, link string) error {
	l.mu.Lock()
	l.links[to] = append(l.links[to], link)
	l.mu.Unlock()
	return l.Mailer.AccountEmail(ctx, org, to, cause, link)
}

func (l *linkRecorder) last(t *testing.T, to string) string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.links[to]
	if len(ls) == 0 {
		t.Fatalf("no link was emailed to %s", to)
	}
	return ls[len(ls)-1]
}

func newHarness(t *testing.T, change func(*dashboard.Settings), settings map[string]string) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st := testenv.Store(t, nil)
	env := testenv.StackSettings(t, st, "tix-dash", "dashboard@tix.localhost")
	for k, v := range settings {
		env[k] = v
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := sending.New(ctx, cfg, nil) // the email jobs sent, as the deliver function does
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Queue.EnsureQueues(ctx); err != nil {
		t.Fatal(err)
	}
	app.AllowLoopbackWebhooks(a.Webhooks, cfg)
	go func() {
		_ = a.Queue.Consume(ctx, queue.DeliveriesQueue, func(ctx context.Context, m queue.Message) error {
			return a.HandleDeliveryMessage(ctx, m.Body)
		})
	}()
	h := &harness{t: t, a: a, ctx: ctx}
	mux := http.NewServeMux()
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	a.Config.Payments.PublicURL = h.srv.URL
	h.d = dash.NewDashboard(a)
	h.links = &linkRecorder{Mailer: h.d.Mail, links: map[string][]string{}}
	h.d.Mail = h.links
	if change != nil {
		change(&h.d.Settings)
	}
	mux.Handle("/", h.d.Handler())
	return h
}

// url is the absolute URL of a dashboard path.
func (h *harness) url(path string) string { return h.srv.URL + h.d.Settings.Path + path }

// client is a browser-like client: a cookie jar, no redirects followed.
func (h *harness) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// page is one answer: status, body, headers.
type page struct {
	status int
	body   string
	header http.Header
}

func (h *harness) do(c *http.Client, method, path string, form url.Values, hdr ...string) page {
	h.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	u := path
	if !strings.HasPrefix(path, "http") {
		u = h.url(path)
	}
	req, err := http.NewRequestWithContext(h.ctx, method, u, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, body: string(b), header: resp.Header}
}

func (h *harness) get(c *http.Client, path string) page { return h.do(c, http.MethodGet, path, nil) }

func (h *harness) post(c *http.Client, path string, kv ...string) page {
	f := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Add(kv[i], kv[i+1])
	}
	return h.do(c, http.MethodPost, path, f)
}

const password = "correct horse battery staple"

// signUp signs an organizer up through the form and opens the emailed
// verification link; it returns the organizer's id.
func (h *harness) signUp(c *http.Client, addr, org string) string {
	h.t.Helper()
	p := h.post(c, "/signup", "org_name", org, "email", addr, "password", password, "time_zone", "Asia/Yekaterinburg")
	if p.status != http.StatusOK {
		h.t.Fatalf("sign up %s: %d %s", addr, p.status, p.body)
	}
	if p := h.get(c, h.links.last(h.t, addr)); p.status != http.StatusOK {
		h.t.Fatalf("verify %s: %d %s", addr, p.status, p.body)
	}
	ms, err := h.d.Accounts.Memberships(h.ctx, addr)
	if err != nil || len(ms) != 1 || ms[0].Role != account.Owner {
		h.t.Fatalf("memberships of %s: %v %v", addr, ms, err)
	}
	return ms[0].OrganizerID
}

// signIn signs in and checks that it lands on the dashboard.
func (h *harness) signIn(c *http.Client, addr, pw string) page {
	h.t.Helper()
	p := h.post(c, "/signin", "email", addr, "password", pw)
	if p.status != http.StatusSeeOther {
		h.t.Fatalf("sign in %s: %d %s", addr, p.status, p.body)
	}
	return p
}

// member creates a verified user with a role in org, signed in on a new client.
func (h *harness) member(org, addr string, role account.Role) *http.Client {
	h.t.Helper()
	now := time.Now().UTC()
	if err := h.d.Accounts.CreateUser(h.ctx, account.User{Email: addr, PasswordHash: dashboard.HashPassword(password), VerifiedAt: &now, CreatedAt: now}); err != nil {
		h.t.Fatal(err)
	}
	if err := h.d.Accounts.AddMember(h.ctx, account.Member{OrganizerID: org, Email: addr, Role: role, AddedAt: now, AddedBy: "test"}); err != nil {
		h.t.Fatal(err)
	}
	c := h.client()
	h.signIn(c, addr, password)
	return c
}

var secretRe = regexp.MustCompile(`value="((?:sk|pk)_(?:test|live)_[0-9A-Za-z]{38}|whsec_[^"]+)"`)

// secretIn is the secret a page shows once.
func secretIn(t *testing.T, body string) string {
	t.Helper()
	m := secretRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no secret on the page:\n%s", body)
	}
	return m[1]
}

func org(h *harness, id string) *ticketing.Organizer {
	h.t.Helper()
	o, err := h.a.Store.Organizers.GetOrganizer(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return o
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// owner signs up an organizer and signs its owner in on a new client.
func (h *harness) owner(addr, name string) (*http.Client, string) {
	h.t.Helper()
	c := h.client()
	o := h.signUp(c, addr, name)
	h.signIn(c, addr, password)
	return c, o
}
