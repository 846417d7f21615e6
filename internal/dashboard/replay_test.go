package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// replayEndpoint is an organizer's verified test endpoint at a receiver
// that already got two order.paid events live.
type replayEndpoint struct {
	h   *harness
	c   *http.Client
	org string
	ep  string
	rc  *receiver
}

func (h *harness) replayEndpoint(addr, name string) *replayEndpoint {
	h.t.Helper()
	c, o := h.owner(addr, name)
	h.get(c, "/lang/en?back=/") // the refusals below are read in English
	rc := newReceiver(h.t)
	if p := h.post(c, "/o/"+o+"/test/webhooks", "url", rc.srv.URL+"/hooks"); p.status != http.StatusCreated {
		h.t.Fatalf("create endpoint: %d %s", p.status, p.body)
	}
	eps, err := h.a.Webhooks.Endpoints(h.ctx, o, ticketing.EnvTest)
	if err != nil || len(eps) != 1 {
		h.t.Fatalf("endpoints: %v %v", eps, err)
	}
	if p := h.post(c, "/o/"+o+"/test/webhooks/"+eps[0].ID+"/verify"); p.status != http.StatusOK {
		h.t.Fatalf("verify: %d %s", p.status, p.body)
	}
	s := h.shop(o)
	s.sell("one@example.com", true)
	s.sell("two@example.com", true)
	r := &replayEndpoint{h: h, c: c, org: o, ep: eps[0].ID, rc: rc}
	testenv.WaitFor(h.t, 30*time.Second, "two order.paid delivered live", func() bool { return len(r.paid()) == 2 })
	return r
}

// paid counts the order.paid envelopes the receiver got, by envelope id.
func (r *replayEndpoint) paid() map[string]int {
	r.rc.mu.Lock()
	defer r.rc.mu.Unlock()
	out := map[string]int{}
	for _, e := range r.rc.got {
		if e["type"] == ticketing.EventOrderPaid {
			out[e["id"].(string)]++
		}
	}
	return out
}

func (r *replayEndpoint) path(rest string) string {
	return "/o/" + r.org + "/test/webhooks/" + r.ep + rest
}

var tokenRe = regexp.MustCompile(`name="token" value="([^"]+)"`)

// form reads a fresh replay form's token from the endpoint's page.
func (r *replayEndpoint) form() string {
	r.h.t.Helper()
	p := r.h.get(r.c, r.path(""))
	m := tokenRe.FindStringSubmatch(p.body)
	if p.status != http.StatusOK || m == nil || !strings.Contains(p.body, `id="replay-since"`) {
		r.h.t.Fatalf("the endpoint's page has no replay form: %d\n%s", p.status, p.body)
	}
	return m[1]
}

// local is t in the organizer's time zone (the sign-up's), as the form's
// datetime-local field takes it.
func local(t time.Time) string {
	loc, _ := time.LoadLocation("Asia/Yekaterinburg")
	return t.In(loc).Format("2006-01-02T15:04")
}

var replayPathRe = regexp.MustCompile(`/webhooks/we_[0-9A-Za-z_]+/replays/(wrp_[0-9a-f]+)$`)

// The form on the endpoint's page starts a replay through the webhook
// service: it answers with the progress page (303), which reloads to done
// with both events queued and delivered again, once each; the audit log
// records it.
func TestReplay_FormStartsReplayWithProgressPage(t *testing.T) {
	h := newHarness(t, nil, nil)
	r := h.replayEndpoint("replay-owner@example.com", "Replays")
	p := h.post(r.c, r.path("/replay"), "token", r.form(), "since", local(time.Now().Add(-time.Hour)))
	m := replayPathRe.FindStringSubmatch(p.header.Get("Location"))
	if p.status != http.StatusSeeOther || m == nil {
		t.Fatalf("replay: %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	progress := strings.TrimPrefix(p.header.Get("Location"), h.d.Settings.Path)
	var page string
	testenv.WaitFor(t, 60*time.Second, "the progress page says done", func() bool {
		pg := h.get(r.c, progress)
		page = pg.body
		return pg.status == http.StatusOK && strings.Contains(page, `data-status="done"`)
	})
	for _, want := range []string{m[1], `id="replay-queued">2<`, `id="replay-done">2<`, "Done:", r.rc.srv.URL} {
		if !strings.Contains(page, want) {
			t.Errorf("the progress page lacks %q:\n%s", want, page)
		}
	}
	for id, n := range r.paid() {
		if n != 2 {
			t.Errorf("%s reached the receiver %d times, want twice (live, then the replay)", id, n)
		}
	}
	if got := auditActions(h, r.org); !strings.HasPrefix(got, "webhook.replay,") {
		t.Errorf("audit log %s: want webhook.replay first", got)
	}
	es, _ := h.d.Accounts.Entries(h.ctx, r.org, 1)
	if len(es) != 1 || es[0].Target != r.ep || !strings.HasPrefix(es[0].Detail, m[1]+" since ") {
		t.Errorf("audit entry %+v", es)
	}
}

// A since in the future, more than 30 days back, or not a time is refused
// on the endpoint's page with what to do, and starts nothing.
func TestReplay_SinceOutsideTheWindowRefused(t *testing.T) {
	h := newHarness(t, nil, nil)
	r := h.replayEndpoint("replay-window@example.com", "Window")
	for _, c := range []struct{ since, want string }{
		{local(time.Now().Add(2 * time.Hour)), "That time is in the future"},
		{local(time.Now().Add(-webhook.ReplayWindow - time.Hour)), "more than 30 days ago"},
		{"yesterday", "Give the date and time to replay the events from"},
	} {
		p := h.post(r.c, r.path("/replay"), "token", r.form(), "since", c.since)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, c.want) || !strings.Contains(p.body, `id="replay-err"`) ||
			!strings.Contains(p.body, `aria-invalid="true"`) || !strings.Contains(p.body, `value="`+c.since+`"`) {
			t.Errorf("since %s: %d, want 400 with %q at the field:\n%s", c.since, p.status, c.want, p.body)
		}
	}
	if p := h.post(r.c, r.path("/replay"), "since", local(time.Now().Add(-time.Hour))); p.status != http.StatusBadRequest || !strings.Contains(p.body, "reload the page") {
		t.Errorf("without the form's token: %d", p.status)
	}
	if got := auditActions(h, r.org); strings.Contains(got, "webhook.replay") {
		t.Errorf("a refused replay is in the audit log: %s", got)
	}
	time.Sleep(2 * time.Second) // a replay started by mistake would have sent by now
	for id, n := range r.paid() {
		if n != 1 {
			t.Errorf("%s reached the receiver %d times after refused replays", id, n)
		}
	}
}

// A member whose role has no API permission (support) cannot replay nor
// read a replay; another organizer's owner gets not-found for the
// endpoint and its replay, through its own organizer's paths as well.
func TestReplay_RoleAndOtherOrganizerRefused(t *testing.T) {
	h := newHarness(t, nil, nil)
	r := h.replayEndpoint("replay-a@example.com", "A")
	p := h.post(r.c, r.path("/replay"), "token", r.form(), "since", local(time.Now().Add(-time.Hour)))
	progress := strings.TrimPrefix(p.header.Get("Location"), h.d.Settings.Path)
	if p.status != http.StatusSeeOther || progress == "" {
		t.Fatalf("owner's replay: %d", p.status)
	}
	token := r.form()
	support := h.member(r.org, "replay-support@example.com", account.Support)
	if p := h.post(support, r.path("/replay"), "token", token, "since", local(time.Now().Add(-time.Hour))); p.status != http.StatusForbidden {
		t.Errorf("support replays: %d, want 403", p.status)
	}
	if p := h.get(support, progress); p.status != http.StatusForbidden || strings.Contains(p.body, `id="replay-queued"`) {
		t.Errorf("support reads the replay: %d", p.status)
	}

	cb, orgB := h.owner("replay-b@example.com", "B")
	rcB := newReceiver(t)
	h.post(cb, "/o/"+orgB+"/test/webhooks", "url", rcB.srv.URL)
	epsB, _ := h.a.Webhooks.Endpoints(h.ctx, orgB, ticketing.EnvTest)
	replayID := progress[strings.LastIndex(progress, "/")+1:]
	for _, path := range []string{
		"/o/" + orgB + "/test/webhooks/" + r.ep + "/replay", // A's endpoint under B
		r.path("/replay"), // A's organizer
		"/o/" + r.org + "/live/webhooks/" + r.ep + "/replay",      // A's, in live mode
		"/o/" + orgB + "/test/webhooks/" + epsB[0].ID + "/replay", // B's own, not verified yet
	} {
		p := h.post(cb, path, "token", token, "since", local(time.Now().Add(-time.Hour)))
		want := http.StatusNotFound
		if strings.Contains(path, epsB[0].ID) {
			want = http.StatusConflict // B's own endpoint, not verified yet: told to verify it
		}
		if p.status != want || strings.Contains(p.body, r.rc.srv.URL) {
			t.Errorf("B posts %s: %d, want %d", path, p.status, want)
		}
	}
	for _, path := range []string{progress, "/o/" + orgB + "/test/webhooks/" + r.ep + "/replays/" + replayID,
		"/o/" + orgB + "/test/webhooks/" + epsB[0].ID + "/replays/" + replayID} {
		if p := h.get(cb, path); p.status != http.StatusNotFound || strings.Contains(p.body, `id="replay-queued"`) {
			t.Errorf("B reads %s: %d, want 404", path, p.status)
		}
	}
	if got := auditActions(h, r.org); strings.Count(got, "webhook.replay") != 1 {
		t.Errorf("A's audit log: %s, want the owner's one replay", got)
	}
	if got := auditActions(h, orgB); strings.Contains(got, "webhook.replay") {
		t.Errorf("B's audit log: %s", got)
	}
}

// The same form sent twice at once (a double click, a resent POST) is one
// replay: both answers lead to it, and each event is replayed once.
func TestReplay_DoubleSubmitIsOneReplay(t *testing.T) {
	h := newHarness(t, nil, nil)
	r := h.replayEndpoint("replay-twice@example.com", "Twice")
	token, since := r.form(), local(time.Now().Add(-time.Hour))
	var wg sync.WaitGroup
	locs := make([]string, 3)
	for i := range locs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := url.Values{"token": {token}, "since": {since}}
			req, _ := http.NewRequestWithContext(h.ctx, http.MethodPost, h.url(r.path("/replay")), strings.NewReader(f.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if resp, err := r.c.Do(req); err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusSeeOther {
					locs[i] = resp.Header.Get("Location")
				}
			}
		}()
	}
	wg.Wait()
	if locs[0] == "" || locs[1] != locs[0] || locs[2] != locs[0] {
		t.Fatalf("three sends of one form: %q, want one replay", locs)
	}
	p := h.post(r.c, r.path("/replay"), "token", token, "since", since) // later, from the browser's history
	if p.header.Get("Location") != locs[0] {
		t.Errorf("the form resent later: %d %q, want %q", p.status, p.header.Get("Location"), locs[0])
	}
	progress := strings.TrimPrefix(locs[0], h.d.Settings.Path)
	testenv.WaitFor(t, 60*time.Second, "the replay done", func() bool {
		return strings.Contains(h.get(r.c, progress).body, `data-status="done"`)
	})
	if page := h.get(r.c, progress).body; !strings.Contains(page, `id="replay-queued">2<`) {
		t.Errorf("the replay queued other than 2:\n%s", page)
	}
	time.Sleep(2 * time.Second) // a second replay would have sent by now
	for id, n := range r.paid() {
		if n != 2 {
			t.Errorf("%s reached the receiver %d times, want twice (live, one replay)", id, n)
		}
	}
	// A new form (a new token) is a new replay.
	if p := h.post(r.c, r.path("/replay"), "token", r.form(), "since", since); p.status != http.StatusSeeOther || p.header.Get("Location") == locs[0] {
		t.Errorf("a new form: %d %q, want another replay", p.status, p.header.Get("Location"))
	}
}
