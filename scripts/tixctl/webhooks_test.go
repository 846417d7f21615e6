package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// cliEndpoint is the JSON view of an endpoint, with the one-time secret of
// create and rotate-secret.
type cliEndpoint struct {
	Secret                   string   `json:"secret"`
	PreviousSecretSignsUntil *string  `json:"previous_secret_signs_until"`
	ID                       string   `json:"id"`
	OrganizerID              string   `json:"organizer_id"`
	Environment              string   `json:"environment"`
	URL                      string   `json:"url"`
	Status                   string   `json:"status"`
	EnabledEvents            []string `json:"enabled_events"`
	Description              *string  `json:"description"`
	Verified                 bool     `json:"verified"`
	VerifiedAt               *string  `json:"verified_at"`
	ConsecutiveFailures      int      `json:"consecutive_failures"`
	DisabledAt               *string  `json:"disabled_at"`
	DisabledReason           *string  `json:"disabled_reason"`
	SecretRotatedAt          *string  `json:"secret_rotated_at"`
}

// received is one POST a receiver got.
type received struct {
	path, signature string
	body            []byte
	env             struct {
		ID   string            `json:"id"`
		Type string            `json:"type"`
		Data map[string]string `json:"data"`
	}
}

// receiver is a webhook receiver on 127.0.0.1 (test endpoints may use http to
// loopback). /echo answers 200 with the nonce of endpoint.verify, /silent 200
// without it, /fail 500, and /switch as /echo until silent is set.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []received
	silent atomic.Bool
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		got := received{path: req.URL.Path, signature: req.Header.Get(webhook.SignatureHeader), body: body}
		if err := json.Unmarshal(body, &got.env); err != nil {
			t.Errorf("receiver: the body is not an envelope: %v\n%s", err, body)
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, got)
		r.mu.Unlock()
		switch path := req.URL.Path; {
		case path == "/echo" || path == "/switch" && !r.silent.Load():
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"nonce": got.env.Data["nonce"]})
		case path == "/silent" || path == "/switch":
			_, _ = io.WriteString(w, "ok")
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url(path string) string { return r.srv.URL + path }

// last returns the last request, which must have gone to path.
func (r *receiver) last(t *testing.T, path string) received {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatalf("the receiver got nothing")
	}
	got := r.reqs[len(r.reqs)-1]
	if got.path != path {
		t.Fatalf("the last request went to %s, want %s", got.path, path)
	}
	return got
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// signatures splits a Tix-Signature value into t and its v1 values.
func signatures(t *testing.T, header string) (string, []string) {
	t.Helper()
	var ts string
	var v1 []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = append(v1, v)
		}
	}
	if ts == "" || len(v1) == 0 {
		t.Fatalf("malformed %s: %q", webhook.SignatureHeader, header)
	}
	return ts, v1
}

func newOrganizer(t *testing.T, c *cli, id string) {
	t.Helper()
	var org ticketing.Organizer
	c.json(0, &org, "organizers", "create", "--name", "Webhook Org", "--id", id)
}

var (
	endpointIDPattern = regexp.MustCompile(`we_[0-9A-Za-z]+`)
	secretPattern     = regexp.MustCompile(regexp.QuoteMeta(webhook.SecretPrefix) + `\S+`)
)

func TestWebhooks_SecretIsShownOnceAndErrors(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()
	newOrganizer(t, c, "org_wh")
	rcv := newReceiver(t)

	var ep cliEndpoint
	c.json(0, &ep, "webhooks", "create", "--organizer", "org_wh", "--env", "test", "--url", rcv.url("/echo"),
		"--events", "order.paid", "--description", "backend")
	if !strings.HasPrefix(ep.Secret, webhook.SecretPrefix) || !strings.HasPrefix(ep.ID, "we_") || ep.OrganizerID != "org_wh" ||
		ep.Environment != "test" || ep.Status != "active" || ep.Verified || ep.VerifiedAt != nil ||
		strings.Join(ep.EnabledEvents, ",") != "order.paid" || ep.Description == nil || *ep.Description != "backend" {
		t.Fatalf("created = %+v", ep)
	}

	code, out, errOut := c.run("webhooks", "create", "--organizer", "org_wh", "--env", "test", "--url", rcv.url("/silent"))
	second, secret := endpointIDPattern.FindString(out), secretPattern.FindString(out)
	if code != 0 || second == "" || secret == "" || !strings.Contains(out, "shown once") ||
		!strings.Contains(out, "tixctl webhooks verify "+second) {
		t.Fatalf("human create: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	sealed := map[string]string{}
	for _, id := range []string{ep.ID, second} {
		stored, err := st.Webhooks.GetEndpoint(ctx, id)
		if err != nil || stored.Secret == "" {
			t.Fatalf("stored endpoint %s: %+v %v", id, stored, err)
		}
		sealed[id] = stored.Secret
	}
	if sealed[ep.ID] == ep.Secret {
		t.Fatal("the secret is stored in plaintext")
	}
	secrets := []string{ep.Secret, secret, sealed[ep.ID], sealed[second]}
	for _, args := range [][]string{
		{"webhooks", "list", "--organizer", "org_wh"},
		{"webhooks", "list", "--organizer", "org_wh", "--json"},
		{"webhooks", "show", ep.ID},
		{"webhooks", "show", ep.ID, "--json"},
		{"webhooks", "show", second, "--json"},
	} {
		code, out, errOut := c.run(args...)
		if code != 0 || !strings.Contains(out, ep.ID) && !strings.Contains(out, second) {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s shows a secret:\n%s", strings.Join(args, " "), out)
			}
		}
		if strings.Contains(out, `"secret"`) {
			t.Errorf("%s has a secret field:\n%s", strings.Join(args, " "), out)
		}
	}

	var list []cliEndpoint
	c.json(0, &list, "webhooks", "list", "--organizer", "org_wh")
	if len(list) != 2 || list[0].ID != ep.ID || list[1].ID != second {
		t.Errorf("list = %+v", list)
	}
	c.json(0, &list, "webhooks", "list", "--organizer", "org_wh", "--env", "live")
	if list == nil || len(list) != 0 {
		t.Errorf("live list = %v, want []", list)
	}

	// Live endpoints need a verified organizer, like live keys.
	var e cliError
	httpURL := rcv.url("/echo")
	c.json(1, &e, "webhooks", "create", "--organizer", "org_wh", "--env", "live", "--url", "https://hooks.example.com/tix")
	if !strings.Contains(e.Error.Message, "not verified") {
		t.Errorf("live endpoint of an unverified organizer: %+v", e)
	}
	var org map[string]any
	c.json(0, &org, "organizers", "verify", "--id", "org_wh")

	// A live endpoint must use https: refused, naming the flag and the URL.
	c.json(1, &e, "webhooks", "create", "--organizer", "org_wh", "--env", "live", "--url", httpURL)
	if e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, "--url") ||
		!strings.Contains(e.Error.Message, httpURL) || !strings.Contains(e.Error.Message, "https") {
		t.Errorf("live http endpoint: %+v", e)
	}
	code, out, errOut = c.run("webhooks", "create", "--organizer", "org_wh", "--env", "live", "--url", httpURL)
	if code != 1 || out != "" || !strings.Contains(errOut, "--url") || !strings.Contains(errOut, "live endpoints must use https") {
		t.Errorf("live http endpoint (human): exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	c.json(1, &e, "webhooks", "create", "--organizer", "org_nobody", "--env", "test", "--url", rcv.url("/echo"))
	if e.Error.Code != "not_found" || !strings.Contains(e.Error.Message, "org_nobody") {
		t.Errorf("unknown organizer: %+v", e)
	}
	c.json(1, &e, "webhooks", "list", "--organizer", "org_nobody")
	if e.Error.Code != "not_found" {
		t.Errorf("list of an unknown organizer: %+v", e)
	}
	c.json(1, &e, "webhooks", "create", "--organizer", "org_wh", "--env", "test", "--url", rcv.url("/echo"), "--events", "order.shipped")
	if e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, "--events") || !strings.Contains(e.Error.Message, "order.shipped") {
		t.Errorf("unknown event type: %+v", e)
	}

	var deleted struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}
	c.json(0, &deleted, "webhooks", "delete", second)
	if deleted.ID != second || !deleted.Deleted {
		t.Errorf("delete = %+v", deleted)
	}
	c.json(1, &e, "webhooks", "show", second)
	if e.Error.Code != "not_found" {
		t.Errorf("show after delete: %+v", e)
	}
	code, _, errOut = c.run("webhooks", "show", second)
	if code != 1 || !strings.Contains(errOut, "webhook endpoint "+second+" not found") {
		t.Errorf("show after delete (human): exit %d, stderr %s", code, errOut)
	}
	c.json(1, &e, "webhooks", "delete", second)
	if e.Error.Code != "not_found" {
		t.Errorf("delete twice: %+v", e)
	}

	for _, args := range [][]string{
		{"webhooks", "show"},
		{"webhooks", "show", ep.ID, "we_other"},
		{"webhooks", "create", "--organizer", "org_wh", "--env", "prod", "--url", httpURL},
		{"webhooks", "create", "--organizer", "org_wh", "--env", "test"},
		{"webhooks", "list"},
		{"webhooks", "update", ep.ID},
		{"webhooks", "update", ep.ID, "--events", ""},
		{"webhooks"},
	} {
		c.json(2, &e, args...)
		if e.Error.Code != "usage" {
			t.Errorf("%s: %+v", strings.Join(args, " "), e)
		}
	}
}

func TestWebhooks_VerifyUpdateRotateDisableTest(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()
	newOrganizer(t, c, "org_wh")
	rcv := newReceiver(t)

	var ep cliEndpoint
	c.json(0, &ep, "webhooks", "create", "--organizer", "org_wh", "--env", "test", "--url", rcv.url("/silent"))
	secret := ep.Secret

	// A receiver that answers 200 without the nonce does not verify it.
	var e cliError
	c.json(1, &e, "webhooks", "verify", ep.ID)
	if !strings.Contains(e.Error.Message, "not verified") || !strings.Contains(e.Error.Message, "nonce") || !strings.Contains(e.Error.Message, "HTTP 200") {
		t.Errorf("verify without the nonce: %+v", e)
	}
	if got := rcv.last(t, "/silent"); got.env.Type != webhook.TypeEndpointVerify {
		t.Errorf("verify sent %q", got.env.Type)
	}
	var shown cliEndpoint
	c.json(0, &shown, "webhooks", "show", ep.ID)
	if shown.Verified || shown.VerifiedAt != nil {
		t.Fatalf("verified without the nonce: %+v", shown)
	}

	// One that echoes it does.
	c.json(0, &shown, "webhooks", "update", ep.ID, "--url", rcv.url("/echo"))
	var verified struct {
		Verified bool               `json:"verified"`
		Result   webhook.SendResult `json:"result"`
		Endpoint cliEndpoint        `json:"endpoint"`
	}
	c.json(0, &verified, "webhooks", "verify", ep.ID)
	got := rcv.last(t, "/echo")
	if !verified.Verified || !verified.Endpoint.Verified || verified.Endpoint.VerifiedAt == nil || !verified.Result.OK ||
		verified.Result.StatusCode != 200 || verified.Result.EnvelopeID != got.env.ID {
		t.Fatalf("verify = %+v", verified)
	}
	if got.env.Type != webhook.TypeEndpointVerify || !strings.HasPrefix(got.env.Data["nonce"], "vn_") {
		t.Errorf("verify envelope = %+v", got.env)
	}
	if err := webhook.Verify(got.signature, got.body, secret, time.Now(), 0); err != nil {
		t.Errorf("the verify POST's signature does not verify with the printed secret: %v", err)
	}
	code, out, errOut := c.run("webhooks", "verify", ep.ID)
	if code != 0 || !strings.Contains(out, "HTTP 200") || !strings.Contains(out, "is verified") {
		t.Errorf("human verify: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	// A new URL must be verified again.
	code, out, errOut = c.run("webhooks", "update", ep.ID, "--url", rcv.url("/echo")+"?v=2", "--description", "moved")
	if code != 0 || !strings.Contains(out, "no longer verified") {
		t.Errorf("human update --url: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	c.json(0, &shown, "webhooks", "show", ep.ID)
	if shown.Verified || shown.VerifiedAt != nil || shown.URL != rcv.url("/echo")+"?v=2" || shown.Description == nil || *shown.Description != "moved" {
		t.Fatalf("after update --url: %+v", shown)
	}
	c.json(0, &shown, "webhooks", "update", ep.ID, "--description", "", "--events", "order.refunded,order.paid")
	if shown.Description != nil || strings.Join(shown.EnabledEvents, ",") != "order.refunded,order.paid" {
		t.Errorf("update --description '' --events: %+v", shown)
	}
	c.json(0, &verified, "webhooks", "verify", ep.ID)

	// A failed verification of a verified endpoint exits 1 and leaves it verified.
	c.json(0, &shown, "webhooks", "update", ep.ID, "--url", rcv.url("/switch"))
	c.json(0, &verified, "webhooks", "verify", ep.ID)
	rcv.silent.Store(true)
	c.json(1, &e, "webhooks", "verify", ep.ID)
	if !strings.Contains(e.Error.Message, "failed") || !strings.Contains(e.Error.Message, "still verified from") {
		t.Errorf("failed re-verification: %+v", e)
	}
	c.json(0, &shown, "webhooks", "show", ep.ID)
	if !shown.Verified {
		t.Errorf("a failed re-verification unverified the endpoint: %+v", shown)
	}
	c.json(0, &shown, "webhooks", "update", ep.ID, "--url", rcv.url("/echo"))
	c.json(0, &verified, "webhooks", "verify", ep.ID)

	// After a rotation both secrets sign, one v1 each.
	var rotated cliEndpoint
	c.json(0, &rotated, "webhooks", "rotate-secret", ep.ID)
	if !strings.HasPrefix(rotated.Secret, webhook.SecretPrefix) || rotated.Secret == secret || rotated.SecretRotatedAt == nil ||
		rotated.PreviousSecretSignsUntil == nil || !rotated.Verified {
		t.Fatalf("rotated = %+v", rotated)
	}
	if until, err := time.Parse(time.RFC3339, *rotated.PreviousSecretSignsUntil); err != nil || time.Until(until) < 23*time.Hour {
		t.Errorf("previous_secret_signs_until = %s (%v), want about 24h from now", *rotated.PreviousSecretSignsUntil, err)
	}
	var tested struct {
		EndpointID string `json:"endpoint_id"`
		webhook.SendResult
	}
	c.json(0, &tested, "webhooks", "test", ep.ID)
	got = rcv.last(t, "/echo")
	if tested.EndpointID != ep.ID || !tested.OK || tested.StatusCode != 200 || tested.EnvelopeID != got.env.ID ||
		got.env.Type != webhook.TypeWebhookTest || got.env.Data["endpoint_id"] != ep.ID {
		t.Fatalf("test = %+v, envelope %+v", tested, got.env)
	}
	ts, v1 := signatures(t, got.signature)
	if len(v1) != 2 {
		t.Fatalf("%d v1 signatures during the overlap, want 2: %s", len(v1), got.signature)
	}
	for i, s := range []string{rotated.Secret, secret} {
		one := "t=" + ts + ",v1=" + v1[i]
		if err := webhook.Verify(one, got.body, s, time.Now(), 0); err != nil {
			t.Errorf("v1 #%d does not verify with secret #%d: %v", i+1, i+1, err)
		}
		if err := webhook.Verify(one, got.body, []string{secret, rotated.Secret}[i], time.Now(), 0); err == nil {
			t.Errorf("v1 #%d verifies with the other secret too", i+1)
		}
	}
	code, out, _ = c.run("webhooks", "rotate-secret", ep.ID)
	if code != 0 || secretPattern.FindString(out) == "" || !strings.Contains(out, "TIX_WEBHOOK_SECRET_OVERLAP") || !strings.Contains(out, "shown once") {
		t.Errorf("human rotate-secret: exit %d\n%s", code, out)
	}

	// Disable and enable.
	c.json(0, &shown, "webhooks", "disable", ep.ID)
	if shown.Status != "disabled" || shown.DisabledAt == nil || shown.DisabledReason == nil || *shown.DisabledReason == "" {
		t.Errorf("disabled = %+v", shown)
	}
	c.json(0, &shown, "webhooks", "show", ep.ID)
	if shown.Status != "disabled" {
		t.Errorf("show after disable: %+v", shown)
	}
	c.json(0, &shown, "webhooks", "enable", ep.ID)
	if shown.Status != "active" || shown.DisabledAt != nil || shown.DisabledReason != nil || !shown.Verified {
		t.Errorf("enabled = %+v", shown)
	}

	// A test that fails exits 1 and does not count against the endpoint's health.
	if _, err := st.Webhooks.EndpointFailed(ctx, ep.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	c.json(0, &shown, "webhooks", "update", ep.ID, "--url", rcv.url("/fail"))
	before := rcv.count()
	c.json(1, &e, "webhooks", "test", ep.ID)
	if rcv.count() != before+1 || !strings.Contains(e.Error.Message, "HTTP 500") || !strings.Contains(e.Error.Message, "2xx") {
		t.Errorf("test against a 500 receiver: %+v", e)
	}
	code, out, errOut = c.run("webhooks", "test", ep.ID)
	if code != 1 || out != "" || !strings.Contains(errOut, "HTTP 500") || !strings.Contains(errOut, " ms") {
		t.Errorf("human test against a 500 receiver: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	c.json(0, &shown, "webhooks", "show", ep.ID)
	if shown.ConsecutiveFailures != 1 {
		t.Errorf("consecutive_failures = %d after failed tests, want 1 (unchanged)", shown.ConsecutiveFailures)
	}
	c.json(1, &e, "webhooks", "verify", ep.ID)
	if !strings.Contains(e.Error.Message, "not verified") || !strings.Contains(e.Error.Message, "HTTP 500") {
		t.Errorf("verify against a 500 receiver: %+v", e)
	}
}

func TestWebhooks_Keyring(t *testing.T) {
	t.Setenv("TIX_WEBHOOK_KEYRING", "")
	for _, tc := range []struct {
		endpoint string
		local    bool
	}{
		{"http://127.0.0.1:8000", true},
		{"http://dynamodb:8000", true},
		{"https://dynamodb.eu-central-1.amazonaws.com", false},
		{"", false},
	} {
		a := &app{endpoint: tc.endpoint}
		if got := a.localDynamo(); got != tc.local {
			t.Errorf("localDynamo(%q) = %v, want %v", tc.endpoint, got, tc.local)
		}
		cfg, err := a.webhookConfig()
		if tc.local && (err != nil || len(cfg.Webhooks.Keyring) == 0) {
			t.Errorf("local %q: %d keyring keys, %v", tc.endpoint, len(cfg.Webhooks.Keyring), err)
		}
		if !tc.local && (err == nil || !strings.Contains(err.Error(), "export TIX_WEBHOOK_KEYRING")) {
			t.Errorf("AWS %q without a keyring: %v", tc.endpoint, err)
		}
	}
	var out, errOut bytes.Buffer
	code := run([]string{"--endpoint", "aws", "webhooks", "list", "--organizer", "org_x"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "TIX_WEBHOOK_KEYRING") {
		t.Errorf("webhooks list against AWS without a keyring: exit %d\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
	}
}
