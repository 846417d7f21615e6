package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
)

// A password reset ends every session of the account server-side: a
// cookie from before the reset (another browser's, or one copied by
// whoever knew the old password) stops working, reads and writes alike;
// signing in with the new password works.
func TestPasswordReset_EndsTheOtherSessions(t *testing.T) {
	h := newHarness(t, nil, nil)
	addr := "reset-sessions@example.com"
	laptop, o := h.owner(addr, "Sessions")
	phone := h.client()
	h.signIn(phone, addr, password)
	for _, c := range []*http.Client{laptop, phone} {
		if p := h.get(c, "/o/"+o+"/test/api"); p.status != http.StatusOK {
			t.Fatalf("before the reset: %d", p.status)
		}
	}
	if p := h.post(h.client(), "/reset", "email", addr); p.status != http.StatusOK {
		t.Fatalf("reset: %d", p.status)
	}
	link := h.links.last(t, addr)
	if p := h.post(h.client(), "/reset/confirm", "t", link[strings.Index(link, "t=")+2:], "password", "a brand new password"); p.status != http.StatusOK {
		t.Fatalf("confirm: %d", p.status)
	}
	for name, c := range map[string]*http.Client{"laptop": laptop, "phone": phone} {
		if p := h.get(c, "/o/"+o+"/test/api"); p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "/signin") {
			t.Errorf("%s's cookie after the reset: GET %d %s, want a redirect to sign in", name, p.status, p.header.Get("Location"))
		}
		if p := h.post(c, "/o/"+o+"/test/keys", "type", "sk"); p.status != http.StatusUnauthorized {
			t.Errorf("%s's cookie after the reset: POST %d, want 401", name, p.status)
		}
	}
	if ks, _ := h.a.Store.Keys.ListKeys(h.ctx, o); len(ks) != 0 {
		t.Errorf("keys created with a cookie from before the reset: %d", len(ks))
	}
	c := h.client()
	h.signIn(c, addr, "a brand new password")
	if p := h.get(c, "/o/"+o+"/test/api"); p.status != http.StatusOK {
		t.Errorf("a session after the reset: %d", p.status)
	}
}
