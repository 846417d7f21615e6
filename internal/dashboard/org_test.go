package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// receiver is a webhook receiver on loopback: it answers endpoint.verify
// with its nonce and records what it got.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []map[string]any
	sigs []string
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var env map[string]any
		_ = json.Unmarshal(b, &env)
		rc.mu.Lock()
		rc.got = append(rc.got, env)
		rc.sigs = append(rc.sigs, r.Header.Get(webhook.SignatureHeader)+"|"+string(b))
		rc.mu.Unlock()
		if data, ok := env["data"].(map[string]any); ok && env["type"] == webhook.TypeEndpointVerify {
			_ = json.NewEncoder(w).Encode(map[string]any{"nonce": data["nonce"]})
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) types() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, e := range rc.got {
		out = append(out, e["type"].(string))
	}
	return out
}

// A key created on the page works as an API key at once, its secret is on
// that page only, revoking it is recorded in the audit log with who and from where.
func TestAPIPage_KeyCreatedOnceRevokedAudited(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("dev@example.com", "Keys")
	p := h.post(c, "/o/"+o+"/test/keys", "type", "pk", "name", "shop", "origins", "https://Shop.example:443/\nhttp://localhost:3000",
		"scopes", auth.ScopeEventsRead, "scopes", auth.ScopeHoldsWrite)
	if p.status != http.StatusCreated {
		t.Fatalf("create key: %d %s", p.status, p.body)
	}
	secret := secretIn(t, p.body)
	k, err := h.a.Store.Keys.LookupKey(h.ctx, auth.Hash(secret))
	if err != nil {
		t.Fatalf("the new key is not found by its secret: %v", err)
	}
	if k.OrganizerID != o || k.Environment != ticketing.EnvTest || k.Type != auth.Publishable ||
		strings.Join(k.AllowedOrigins, " ") != "https://shop.example http://localhost:3000" || len(k.Scopes) != 2 {
		t.Errorf("key %+v", k)
	}
	api := h.get(c, "/o/"+o+"/test/api")
	if api.status != http.StatusOK || strings.Contains(api.body, secret) || !strings.Contains(api.body, k.ID) {
		t.Fatalf("the API page shows the secret or misses the key: %d", api.status)
	}
	if live := h.get(c, "/o/"+o+"/live/api"); strings.Contains(live.body, k.ID) {
		t.Error("the test key is listed in live mode")
	}
	// Bad input is shown on the page, with the rule that refused it.
	if p := h.post(c, "/o/"+o+"/test/keys", "type", "pk"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "origin") {
		t.Errorf("pk without origins: %d", p.status)
	}
	// An unverified organizer has no live keys (the same rule as tixctl's).
	if p := h.post(c, "/o/"+o+"/live/keys", "type", "sk"); p.status != http.StatusConflict {
		t.Errorf("live key of an unverified organizer: %d", p.status)
	}
	if p := h.post(c, "/o/"+o+"/test/keys/"+k.ID+"/revoke"); p.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d %s", p.status, p.body)
	}
	if k, _ := h.a.Store.Keys.LookupKey(h.ctx, auth.Hash(secret)); k.RevokedAt == nil {
		t.Error("the key is not revoked")
	}
	if api := h.get(c, "/o/"+o+"/test/api"); strings.Contains(api.body, "github.com") || strings.Contains(api.body, "rel=\"nofollow") {
		t.Error("a key revoked by hand is shown as leaked")
	}
	es, err := h.d.Accounts.Entries(h.ctx, o, 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range es {
		actions = append(actions, e.Action)
		if e.Actor != "dev@example.com" || e.IP != "127.0.0.1" || e.At.IsZero() {
			t.Errorf("entry %+v: want who, when and from where", e)
		}
	}
	if strings.Join(actions, ",") != "key.revoke,key.create,account.signin,account.signup" {
		t.Errorf("audit log %v", actions)
	}
	if p := h.get(c, "/o/"+o+"/test/audit"); p.status != http.StatusOK || !strings.Contains(p.body, "key.revoke") {
		t.Errorf("audit page: %d", p.status)
	}
}

// The endpoint's buttons go through the webhook service: create (secret
// once), verify ownership, Test (a signed webhook.test reaches the
// receiver), change the secret (both sign for the overlap), disable, enable.
func TestAPIPage_WebhookEndpoint(t *testing.T) {
	h := newHarness(t, nil, nil)
	rc := newReceiver(t)
	c, o := h.owner("hooks@example.com", "Hooks")
	p := h.post(c, "/o/"+o+"/test/webhooks", "url", rc.srv.URL+"/hooks", "events", ticketing.EventOrderPaid, "description", "shop")
	if p.status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", p.status, p.body)
	}
	first := secretIn(t, p.body)
	eps, _ := h.a.Webhooks.Endpoints(h.ctx, o, ticketing.EnvTest)
	if len(eps) != 1 || eps[0].Verified || strings.Join(eps[0].EnabledEvents, ",") != ticketing.EventOrderPaid {
		t.Fatalf("endpoints %+v", eps)
	}
	ep := "/o/" + o + "/test/webhooks/" + eps[0].ID
	if p := h.post(c, ep+"/verify"); p.status != http.StatusOK || !strings.Contains(p.body, "200") {
		t.Fatalf("verify: %d %s", p.status, p.body)
	}
	if got, _ := h.a.Webhooks.GetEndpoint(h.ctx, eps[0].ID); !got.Verified {
		t.Error("not verified after the receiver echoed the nonce")
	}
	if p := h.post(c, ep+"/test"); p.status != http.StatusOK {
		t.Fatalf("test: %d", p.status)
	}
	if ts := rc.types(); strings.Join(ts, ",") != webhook.TypeEndpointVerify+","+webhook.TypeWebhookTest {
		t.Fatalf("the receiver got %v", ts)
	}
	rc.mu.Lock()
	sig := rc.sigs[1]
	rc.mu.Unlock()
	header, body, _ := strings.Cut(sig, "|")
	if err := webhook.Verify(header, []byte(body), first, h.a.Webhooks.Clock.Now(), 0); err != nil {
		t.Errorf("the Test POST's signature does not verify with the secret shown: %v", err)
	}
	p = h.post(c, ep+"/rotate")
	if p.status != http.StatusOK {
		t.Fatalf("rotate: %d", p.status)
	}
	if second := secretIn(t, p.body); second == first {
		t.Error("the secret did not change")
	}
	for _, a := range []string{"disable", "enable"} {
		if p := h.post(c, ep+"/"+a); p.status != http.StatusOK {
			t.Errorf("%s: %d", a, p.status)
		}
	}
	if got, _ := h.a.Webhooks.GetEndpoint(h.ctx, eps[0].ID); got.Status != webhook.EndpointActive {
		t.Errorf("status after disable and enable: %s", got.Status)
	}
	if p := h.get(c, ep); p.status != http.StatusOK || !strings.Contains(p.body, rc.srv.URL) {
		t.Errorf("endpoint page: %d", p.status)
	}
	if p := h.post(c, ep+"/explode"); p.status != http.StatusNotFound {
		t.Errorf("unknown action: %d", p.status)
	}
}

// A member of organizer B reaches none of organizer A's pages or objects by
// URL: every one answers 404, as for an id that does not exist, and nothing changes.
func TestTenancy_OtherOrganizerIsNotFound(t *testing.T) {
	h := newHarness(t, nil, nil)
	rc := newReceiver(t)
	ca, cb := h.client(), h.client()
	orgA := h.signUp(ca, "a@example.com", "A")
	orgB := h.signUp(cb, "b@example.com", "B")
	h.signIn(ca, "a@example.com", password)
	h.signIn(cb, "b@example.com", password)
	secret := secretIn(t, h.post(ca, "/o/"+orgA+"/test/keys", "type", "sk").body)
	h.post(ca, "/o/"+orgA+"/test/webhooks", "url", rc.srv.URL)
	epsA, _ := h.a.Webhooks.Endpoints(h.ctx, orgA, ticketing.EnvTest)
	kA, _ := h.a.Store.Keys.LookupKey(h.ctx, auth.Hash(secret))
	for _, path := range []string{"/o/" + orgA + "/test/", "/o/" + orgA + "/test/api", "/o/" + orgA + "/test/members", "/o/" + orgA + "/test/audit",
		"/o/" + orgA + "/test/webhooks/" + epsA[0].ID, "/o/" + orgB + "/test/webhooks/" + epsA[0].ID, "/o/" + orgB + "/live/webhooks/" + epsA[0].ID} {
		if p := h.get(cb, path); p.status != http.StatusNotFound {
			t.Errorf("B GET %s: %d, want 404", path, p.status)
		}
	}
	for _, path := range []string{"/o/" + orgA + "/test/keys", "/o/" + orgB + "/test/keys/" + kA.ID + "/revoke", "/o/" + orgA + "/test/keys/" + kA.ID + "/revoke",
		"/o/" + orgB + "/test/webhooks/" + epsA[0].ID + "/disable", "/o/" + orgB + "/test/webhooks/" + epsA[0].ID + "/rotate",
		"/o/" + orgB + "/test/deliveries/whd_evt_x_" + epsA[0].ID + "/redeliver", "/o/" + orgA + "/test/members"} {
		if p := h.post(cb, path, "type", "sk", "email", "b2@example.com", "role", "owner"); p.status != http.StatusNotFound {
			t.Errorf("B POST %s: %d, want 404", path, p.status)
		}
	}
	if k, _ := h.a.Store.Keys.LookupKey(h.ctx, auth.Hash(secret)); k.RevokedAt != nil {
		t.Error("B revoked A's key")
	}
	if ep, _ := h.a.Webhooks.GetEndpoint(h.ctx, epsA[0].ID); ep.Status != webhook.EndpointActive || ep.SecretRotatedAt != nil {
		t.Errorf("B changed A's endpoint: %+v", ep)
	}
	if ks, _ := h.a.Store.Keys.ListKeys(h.ctx, orgA); len(ks) != 1 {
		t.Errorf("A's keys: %d", len(ks))
	}
	if ms, _ := h.d.Accounts.ListMembers(h.ctx, orgA); len(ms) != 1 {
		t.Errorf("A's members: %v", ms)
	}
}

// Every role against every organizer page and action: what it may not do
// is refused with 403 and changes nothing; what it may do is not refused.
func TestRoles_EveryDenial(t *testing.T) {
	h := newHarness(t, nil, nil)
	rc := newReceiver(t)
	owner, o := h.owner("boss@example.com", "Roles")
	h.post(owner, "/o/"+o+"/test/webhooks", "url", rc.srv.URL)
	eps, _ := h.a.Webhooks.Endpoints(h.ctx, o, ticketing.EnvTest)
	ep := eps[0].ID
	secret := secretIn(t, h.post(owner, "/o/"+o+"/test/keys", "type", "sk").body)
	k, _ := h.a.Store.Keys.LookupKey(h.ctx, auth.Hash(secret))
	base := "/o/" + o + "/test"
	type action struct {
		method, path string
		perm         account.Permission
	}
	actions := []action{
		{"GET", base + "/", account.SeeOverview},
		{"GET", base + "/api", account.ManageAPI},
		{"POST", base + "/keys", account.ManageAPI},
		{"POST", base + "/keys/" + k.ID + "/revoke", account.ManageAPI},
		{"POST", base + "/webhooks", account.ManageAPI},
		{"GET", base + "/webhooks/" + ep, account.ManageAPI},
		{"POST", base + "/webhooks/" + ep + "/disable", account.ManageAPI},
		{"POST", base + "/webhooks/" + ep + "/rotate", account.ManageAPI},
		{"POST", base + "/deliveries/whd_evt_x_" + ep + "/redeliver", account.ManageAPI},
		{"GET", base + "/members", account.ManageMembers},
		{"POST", base + "/members", account.ManageMembers},
		{"POST", base + "/members/remove", account.ManageMembers},
		{"GET", base + "/audit", account.ReadAudit},
	}
	for _, role := range []account.Role{account.Developer, account.Support, account.Viewer} {
		c := h.member(o, string(role)+"@example.com", role)
		for _, a := range actions {
			var p page
			if a.method == "GET" {
				p = h.get(c, a.path)
			} else {
				p = h.post(c, a.path, "type", "zz", "url", "not a url", "email", "boss@example.com", "role", "owner")
			}
			denied := p.status == http.StatusForbidden
			if denied == role.Can(a.perm) {
				t.Errorf("%s %s %s: %d (may: %v)", role, a.method, a.path, p.status, role.Can(a.perm))
			}
		}
		if api := h.get(c, base+"/api"); role != account.Developer && strings.Contains(api.body, k.ID) {
			t.Errorf("%s sees the keys", role)
		}
	}
	// Nothing the denied roles sent changed anything.
	if k2, _ := h.a.Store.Keys.LookupKey(h.ctx, auth.Hash(secret)); k2.RevokedAt != nil && !revokedByDeveloper(h, o, k.ID) {
		t.Error("the key was revoked by a role that may not")
	}
	if ms, _ := h.d.Accounts.ListMembers(h.ctx, o); len(ms) != 4 {
		t.Errorf("members %v, want the owner and three", ms)
	}
}

func revokedByDeveloper(h *harness, org, keyID string) bool {
	es, _ := h.d.Accounts.Entries(context.Background(), org, 100)
	for _, e := range es {
		if e.Action == "key.revoke" && e.Target == keyID {
			return e.Actor == "developer@example.com"
		}
	}
	return false
}

// An owner invites a support member by email; the invited person sets a
// password through the link, is signed in with that role, and cannot see
// the keys. The invitation and the joining are in the audit log.
func TestInvite_SupportMemberCannotSeeKeys(t *testing.T) {
	h := newHarness(t, nil, nil)
	owner, o := h.owner("own@example.com", "Invite")
	if p := h.post(owner, "/o/"+o+"/test/members", "email", "Help@Example.com", "role", "support"); p.status != http.StatusOK {
		t.Fatalf("invite: %d %s", p.status, p.body)
	}
	link := h.links.last(t, "help@example.com")
	c := h.client()
	if p := h.get(c, link); p.status != http.StatusOK || !strings.Contains(p.body, "help@example.com") {
		t.Fatalf("invitation page: %d", p.status)
	}
	tok := link[strings.Index(link, "t=")+2:]
	if p := h.post(c, "/invite", "t", tok, "password", "support password"); p.status != http.StatusSeeOther {
		t.Fatalf("accept: %d %s", p.status, p.body)
	}
	m, err := h.d.Accounts.GetMember(h.ctx, o, "help@example.com")
	if err != nil || m.Role != account.Support || m.AddedBy != "own@example.com" {
		t.Fatalf("member %+v %v", m, err)
	}
	if p := h.get(c, "/o/"+o+"/test/api"); p.status != http.StatusForbidden {
		t.Errorf("support on the API page: %d", p.status)
	}
	if p := h.get(c, "/o/"+o+"/test/"); p.status != http.StatusOK || strings.Contains(p.body, "/api\"") {
		t.Errorf("support's overview: %d (links the API page?)", p.status)
	}
	if p := h.post(h.client(), "/invite", "t", tok, "password", "another password"); p.status != http.StatusBadRequest {
		t.Errorf("the invitation a second time: %d", p.status)
	}
	es, _ := h.d.Accounts.Entries(h.ctx, o, 10)
	if len(es) < 2 || es[0].Action != "member.join" || es[1].Action != "member.invite" {
		t.Errorf("audit log %+v", es)
	}
}

// A key revoked as leaked (a secret scanning report, or tixctl keys revoke
// --leaked) shows why and where it was found on the API page.
func TestAPIPage_LeakedKeyShowsWhereItWasFound(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("leak@example.com", "Leaks")
	p := h.post(c, "/o/"+o+"/test/keys", "type", "sk", "name", "server")
	if p.status != http.StatusCreated {
		t.Fatalf("create key: %d %s", p.status, p.body)
	}
	k, err := h.a.Store.Keys.LookupKey(h.ctx, auth.Hash(secretIn(t, p.body)))
	if err != nil {
		t.Fatal(err)
	}
	src := "https://github.com/someone/shop/blob/main/.env"
	if _, _, err := h.a.Store.Keys.RevokeKeyWith(h.ctx, k.ID, auth.Revocation{At: time.Now(), Reason: auth.RevokedLeaked, Source: src}); err != nil {
		t.Fatal(err)
	}
	api := h.get(c, "/o/"+o+"/test/api")
	said := strings.Contains(api.body, "найден в открытом доступе") || strings.Contains(api.body, "found in public at")
	if !said || !strings.Contains(api.body, `href="`+src+`"`) {
		t.Errorf("the API page does not say where the leaked key %s was found", k.ID)
	}
}
