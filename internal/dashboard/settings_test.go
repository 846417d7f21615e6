package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tix/internal/dashboard/account"
	"tix/internal/emailjobs"
)

// identity is the organizer's email identity as stored.
func identity(h *harness, org string) *emailjobs.Identity {
	h.t.Helper()
	id, err := h.a.Store.Emails.GetIdentity(h.ctx, org)
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// inlineError fails unless p is a 400 naming the field's error inline.
func inlineError(t *testing.T, what string, p page, field string) {
	t.Helper()
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="set-`+field+`-err" class="field-error"`) ||
		!strings.Contains(p.body, `aria-invalid="true"`) {
		t.Errorf("%s: %d, want 400 with the inline error of %s", what, p.status, field)
	}
}

// The email identity: valid fields are stored through the store's
// SetIdentity (as tixctl organizers set-identity), each invalid one is shown
// inline and changes nothing.
func TestSettings_EmailIdentity(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("owner-set@example.com", "Settings")
	base := "/o/" + o + "/test/settings"
	if p := h.get(c, base); p.status != http.StatusOK || !strings.Contains(p.body, "owner-set@example.com") {
		t.Fatalf("settings page: %d", p.status)
	}
	valid := []string{"sender_name", "Acme Live", "reply_to", "help@acme.example", "support", "+7 495 000-00-00", "logo_url", "https://acme.example/logo.png"}
	for _, tc := range []struct{ field, value string }{
		{"sender_name", "Acme <tickets@acme.example>"},
		{"sender_name", strings.Repeat("x", 65)},
		{"reply_to", "Help <help@acme.example>"},
		{"support", "line one\nline two"},
		{"logo_url", "http://acme.example/logo.png"},
	} {
		form := append([]string{}, valid...)
		for i := 0; i < len(form); i += 2 {
			if form[i] == tc.field {
				form[i+1] = tc.value
			}
		}
		inlineError(t, tc.field+"="+tc.value, h.post(c, base+"/email", form...), tc.field)
		if id := identity(h, o); id.SenderName != "" || id.ReplyTo != "" {
			t.Fatalf("a refused form changed the identity: %+v", id)
		}
	}
	if p := h.post(c, base+"/email", valid...); p.status != http.StatusOK {
		t.Fatalf("save: %d", p.status)
	}
	id := identity(h, o)
	if id.SenderName != "Acme Live" || id.ReplyTo != "help@acme.example" || id.Support != "+7 495 000-00-00" || id.LogoURL != "https://acme.example/logo.png" {
		t.Errorf("identity %+v", id)
	}
	// An empty field removes it.
	if p := h.post(c, base+"/email", "sender_name", "", "reply_to", "help@acme.example", "support", "", "logo_url", ""); p.status != http.StatusOK {
		t.Fatalf("clear: %d", p.status)
	}
	if id := identity(h, o); id.SenderName != "" || id.Support != "" || id.LogoURL != "" || id.ReplyTo != "help@acme.example" {
		t.Errorf("after clearing %+v", id)
	}
	if got := auditActions(h, o); got != "settings.email,settings.email,account.signin,account.signup" {
		t.Errorf("audit log %s", got)
	}
}

// Alert contacts: 1 to 5 addresses, one a line (SetContacts, as tixctl
// organizers set-contacts).
func TestSettings_Contacts(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("contacts@example.com", "Contacts")
	base := "/o/" + o + "/test/settings/contacts"
	six := strings.Repeat("a@example.com\n", 6)
	for _, bad := range []string{"", "  \n", "not an address", "Ops <ops@example.com>", six} {
		inlineError(t, fmt.Sprintf("contacts %q", bad), h.post(c, base, "contacts", bad), "contacts")
	}
	if id := identity(h, o); strings.Join(id.Contacts, ",") != "contacts@example.com" {
		t.Fatalf("a refused form changed the contacts: %v", id.Contacts)
	}
	if p := h.post(c, base, "contacts", "Ops@Example.com\r\nowner2@example.com, contacts@example.com"); p.status != http.StatusOK {
		t.Fatalf("save: %d", p.status)
	}
	if id := identity(h, o); strings.Join(id.Contacts, ",") != "ops@example.com,owner2@example.com,contacts@example.com" {
		t.Errorf("contacts %v", id.Contacts)
	}
}

// Language and time zone: the organizer's language is its emails' and its
// dashboard's for members without a choice of their own; times show in the
// chosen zone.
func TestSettings_LanguageAndTimeZone(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("lang@example.com", "Lang")
	base := "/o/" + o + "/test/settings"
	inlineError(t, "language de", h.post(c, base+"/general", "language", "de", "time_zone", "UTC"), "language")
	inlineError(t, "zone Mars", h.post(c, base+"/general", "language", "en", "time_zone", "Mars/Olympus"), "zone")
	if st, _ := h.d.Accounts.GetSettings(h.ctx, o); st.TimeZone != "Asia/Yekaterinburg" {
		t.Fatalf("a refused form changed the time zone: %s", st.TimeZone)
	}
	if id := identity(h, o); id.Language != "" {
		t.Fatalf("a refused form changed the language: %s", id.Language)
	}
	p := h.post(c, base+"/general", "language", "en", "time_zone", "Asia/Vladivostok")
	if p.status != http.StatusOK || p.header.Get("Content-Language") != "en" {
		t.Fatalf("save: %d %s", p.status, p.header.Get("Content-Language"))
	}
	if st, _ := h.d.Accounts.GetSettings(h.ctx, o); st.TimeZone != "Asia/Vladivostok" {
		t.Errorf("time zone %s", st.TimeZone)
	}
	if id := identity(h, o); id.Lang() != "en" {
		t.Errorf("email language %s", id.Lang())
	}
	// A member who has not picked a language sees the organizer's; one who
	// has keeps theirs.
	v := h.member(o, "viewer-lang@example.com", account.Viewer)
	if p := h.get(v, "/o/"+o+"/test/"); p.header.Get("Content-Language") != "en" || !strings.Contains(p.body, "&#43;10") {
		t.Errorf("overview: language %s, want en and Vladivostok's +10 time:\n%s", p.header.Get("Content-Language"), p.body)
	}
	if p := h.do(v, http.MethodGet, "/o/"+o+"/test/", nil, "Cookie", "lang=ru"); p.header.Get("Content-Language") != "ru" {
		t.Errorf("a member's own language: %s", p.header.Get("Content-Language"))
	}
}

// The test-mode allow-list (AddTestRecipient and RemoveTestRecipient, as
// tixctl organizers test-recipients): at most emailjobs.MaxTestRecipients.
func TestSettings_TestRecipients(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, o := h.owner("tests@example.com", "Tests")
	base := "/o/" + o + "/test/settings/test-recipients"
	inlineError(t, "bad address", h.post(c, base, "email", "dev at example"), "test")
	for i := range emailjobs.MaxTestRecipients {
		if p := h.post(c, base, "email", fmt.Sprintf("Dev%d@Example.com", i)); p.status != http.StatusOK {
			t.Fatalf("add %d: %d", i, p.status)
		}
	}
	p := h.post(c, base, "email", "one-more@example.com")
	if p.status != http.StatusConflict || !strings.Contains(p.body, `id="set-test-err"`) {
		t.Errorf("past the limit: %d", p.status)
	}
	if p := h.post(c, base+"/remove", "email", "dev0@example.com"); p.status != http.StatusOK {
		t.Fatalf("remove: %d", p.status)
	}
	id := identity(h, o)
	if len(id.TestRecipients) != emailjobs.MaxTestRecipients-1 || id.OwnAddress("dev0@example.com") || !id.OwnAddress("dev1@example.com") {
		t.Errorf("test recipients %v", id.TestRecipients)
	}
	if got := auditActions(h, o); !strings.HasPrefix(got, "settings.test_recipient_remove,settings.test_recipient_add,") {
		t.Errorf("audit log %s", got)
	}
}

// Only owners reach the Settings page: developer, support and viewer get
// 403; a member of another organizer gets 404; nothing changes.
func TestSettings_Roles(t *testing.T) {
	h := newHarness(t, nil, nil)
	_, o := h.owner("boss-set@example.com", "Roles")
	other, _ := h.owner("other-set@example.com", "Other")
	base := "/o/" + o + "/test/settings"
	form := []string{"sender_name", "Evil", "reply_to", "evil@example.com", "contacts", "evil@example.com",
		"language", "en", "time_zone", "UTC", "email", "evil@example.com"}
	check := func(who string, c *http.Client, want int) {
		if p := h.get(c, base); p.status != want {
			t.Errorf("%s GET settings: %d, want %d", who, p.status, want)
		}
		for _, path := range []string{"/email", "/contacts", "/general", "/test-recipients", "/test-recipients/remove"} {
			if p := h.post(c, base+path, form...); p.status != want {
				t.Errorf("%s POST %s: %d, want %d", who, path, p.status, want)
			}
		}
	}
	for _, role := range []account.Role{account.Developer, account.Support, account.Viewer} {
		check(string(role), h.member(o, string(role)+"-set@example.com", role), http.StatusForbidden)
	}
	check("another organizer's owner", other, http.StatusNotFound)
	id := identity(h, o)
	if id.SenderName != "" || id.ReplyTo != "" || id.Language != "" || len(id.TestRecipients) != 0 || strings.Join(id.Contacts, ",") != "boss-set@example.com" {
		t.Errorf("identity changed: %+v", id)
	}
	if st, _ := h.d.Accounts.GetSettings(h.ctx, o); st.TimeZone != "Asia/Yekaterinburg" {
		t.Errorf("time zone changed: %s", st.TimeZone)
	}
}
