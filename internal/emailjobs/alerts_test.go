package emailjobs_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/emailjobs"
	"tix/internal/webhook"
	"tix/internal/webhook/webhooktest"
)

// failingReceiver verifies endpoints and answers every order event 500.
func failingReceiver(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := webhooktest.Receive(w, r, nil); ok {
			http.Error(w, "down", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// An endpoint disabled by its failures alerts each owner contact once, with
// its last failures; raising the same cause again sends nothing more.
func TestEndpointDisabledAlertArrivesOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.a.Store.Emails.SetContacts(h.ctx, "org_l", []string{"owner@example.com", "ops@example.com"}); err != nil {
		t.Fatal(err)
	}
	w := h.a.Webhooks
	app.AllowLoopbackWebhooks(w, h.a.Config)
	w.Settings.Schedule = []time.Duration{0, 0, 0}
	w.Settings.DisableFailuresNew = 2
	ep, _, err := w.CreateEndpoint(h.ctx, webhook.NewEndpoint{OrganizerID: "org_l", Environment: tenant.Environment,
		URL: failingReceiver(t).URL + "/hooks", EnabledEvents: []string{"order.paid"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, res, err := w.VerifyEndpoint(h.ctx, ep.ID); err != nil || !res.OK {
		t.Fatalf("verify: %+v %v", res, err)
	}
	for range 3 {
		h.paidOrder("buyer@example.com")
	}
	h.waitFor("two alerts", func() bool { return len(h.rec.to("alert")) >= 2 })
	got, err := w.Store.GetEndpoint(h.ctx, ep.ID)
	if err != nil || got.Status != webhook.EndpointDisabled {
		t.Fatalf("endpoint %+v %v", got, err)
	}
	// The same cause raised again (a retried attempt, another process).
	h.svc.EndpointDisabled(h.ctx, "org_l", ep.ID, ep.URL, got.DisabledReason, 2, nil, *got.DisabledAt)
	time.Sleep(500 * time.Millisecond)
	alerts := h.rec.to("alert")
	if len(alerts) != 2 {
		t.Fatalf("%d alert emails, want one per contact (2)", len(alerts))
	}
	tos := map[string]bool{}
	for _, m := range alerts {
		tos[m.To] = true
		if !strings.Contains(m.Text, ep.ID) || !strings.Contains(m.Text, "HTTP 500") || !strings.Contains(m.Subject, emailjobs.CauseEndpointDisabled) {
			t.Errorf("alert %q: %s", m.Subject, m.Text)
		}
	}
	if !tos["owner@example.com"] || !tos["ops@example.com"] {
		t.Errorf("alerts went to %v", tos)
	}
}

// A live key's revocation alerts once per key.
func TestLiveKeyRevokedAlertOncePerKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.a.Store.Emails.SetContacts(h.ctx, "org_l", []string{"owner@example.com"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, key := range []string{"key_a", "key_a", "key_b"} {
		if _, err := h.svc.LiveKeyRevoked(h.ctx, "org_l", key, now); err != nil {
			t.Fatal(err)
		}
	}
	h.waitFor("two alerts", func() bool { return len(h.rec.to("alert")) >= 2 })
	time.Sleep(300 * time.Millisecond)
	if n := len(h.rec.to("alert")); n != 2 {
		t.Fatalf("%d alerts for two keys", n)
	}
}

// SES bounce and complaint notifications (inside the SNS envelope) give the
// addresses to suppress; a transient bounce gives none.
func TestParseSESNotification(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"ses-bounce-permanent.json", []string{"bounce@simulator.amazonses.com"}},
		{"ses-bounce-transient.json", nil},
		{"ses-complaint.json", []string{"complaint@simulator.amazonses.com"}},
	} {
		raw, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		sups, err := emailjobs.ParseSESNotification(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		var got []string
		for _, s := range sups {
			got = append(got, s.Address)
			if s.At.IsZero() || s.Reason == "" {
				t.Errorf("%s: %+v", c.file, s)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %v, want %v", c.file, got, c.want)
		}
	}
	if _, err := emailjobs.ParseSESNotification([]byte("{")); err == nil {
		t.Error("a malformed notification parsed")
	}
}

// An SES bounce or complaint arriving on the deliveries queue (raw or in its
// SNS envelope) is told apart from tix's own messages.
func TestIsSESNotification(t *testing.T) {
	raw := `{"notificationType":"Bounce","bounce":{"bounceType":"Permanent","bouncedRecipients":[{"emailAddress":"x@example.com"}]},"mail":{"messageId":"m"}}`
	env, _ := json.Marshal(map[string]string{"Type": "Notification", "TopicArn": "arn:aws:sns:eu-central-1:1:t", "Message": raw})
	for name, c := range map[string]struct {
		body string
		want bool
	}{
		"raw":          {raw, true},
		"sns envelope": {string(env), true},
		"email job":    {`{"kind":"email","job_id":"j"}`, false},
		"fan-out":      {`{"kind":"fanout","event_id":"evt_1"}`, false},
		"not json":     {`nope`, false},
	} {
		if got := emailjobs.IsSESNotification([]byte(c.body)); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}
