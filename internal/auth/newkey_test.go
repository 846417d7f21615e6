package auth_test

import (
	"errors"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// NewKey is the one place the rules of a new key live (tixctl and the
// dashboard both call it): each refusal names its field.
func TestNewKey_Rules(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	past := now.Add(-time.Hour)
	for _, c := range []struct {
		name  string
		req   auth.KeyRequest
		param string
	}{
		{"bad type", auth.KeyRequest{Type: "xk", Environment: ticketing.EnvTest}, "type"},
		{"bad env", auth.KeyRequest{Type: auth.Secret, Environment: "prod"}, "environment"},
		{"pk without origin", auth.KeyRequest{Type: auth.Publishable, Environment: ticketing.EnvTest}, "origins"},
		{"pk with IPs", auth.KeyRequest{Type: auth.Publishable, Environment: ticketing.EnvTest, Origins: []string{"https://a.example"}, IPs: []string{"10.0.0.1"}}, "ips"},
		{"sk with origin", auth.KeyRequest{Type: auth.Secret, Environment: ticketing.EnvTest, Origins: []string{"https://a.example"}}, "origins"},
		{"pk secret-only scope", auth.KeyRequest{Type: auth.Publishable, Environment: ticketing.EnvTest, Origins: []string{"https://a.example"}, Scopes: []string{auth.ScopeOrdersRefund}}, "scopes"},
		{"bad IP", auth.KeyRequest{Type: auth.Secret, Environment: ticketing.EnvTest, IPs: []string{"10.0.0.300"}}, "ips"},
		{"bad origin", auth.KeyRequest{Type: auth.Publishable, Environment: ticketing.EnvTest, Origins: []string{"shop.example/x"}}, "origins"},
		{"expired", auth.KeyRequest{Type: auth.Secret, Environment: ticketing.EnvTest, ExpiresAt: &past}, "expires_at"},
	} {
		_, _, _, err := auth.NewKey(c.req, now)
		var e *ticketing.Error
		if !ticketingErr(err, &e) || e.Code != ticketing.CodeInvalidRequest || e.Param != c.param {
			t.Errorf("%s: %v, want invalid_request on %s", c.name, err, c.param)
		}
	}
	k, secret, hash, err := auth.NewKey(auth.KeyRequest{OrganizerID: "org_a", Type: auth.Secret, Environment: ticketing.EnvLive,
		IPs: []string{"203.0.113.7", "203.0.113.7", "10.0.0.0/8"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if hash != auth.Hash(secret) || k.Last4 != secret[len(secret)-4:] || len(k.Scopes) != len(auth.AllScopes) ||
		len(k.AllowedIPs) != 2 || k.AllowedIPs[0] != "203.0.113.7/32" || k.Environment != ticketing.EnvLive {
		t.Errorf("key %+v from secret %s", k, secret)
	}
}

func ticketingErr(err error, target **ticketing.Error) bool {
	e, ok := err.(*ticketing.Error)
	*target = e
	return ok
}

// A key bound to events is a door key: secret, check-in scopes only.
func TestNewKey_EventsBindADoorKeyWithCheckInScopesOnly(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	door := auth.KeyRequest{OrganizerID: "org_a", Type: auth.Secret, Environment: ticketing.EnvLive,
		Scopes: []string{auth.ScopeCheckinsWrite}, Events: []string{"evt_a", "evt_b", "evt_a"}}
	k, _, _, err := auth.NewKey(door, now)
	if err != nil || len(k.Events) != 2 || k.Events[1] != "evt_b" || len(k.Scopes) != 1 {
		t.Fatalf("door key %+v %v", k, err)
	}
	for name, r := range map[string]auth.KeyRequest{
		"default scopes":  {OrganizerID: "org_a", Type: auth.Secret, Environment: ticketing.EnvLive, Events: []string{"evt_a"}},
		"buyer data":      {OrganizerID: "org_a", Type: auth.Secret, Environment: ticketing.EnvLive, Scopes: []string{auth.ScopeCheckinsWrite, auth.ScopeOrdersRead}, Events: []string{"evt_a"}},
		"publishable":     {OrganizerID: "org_a", Type: auth.Publishable, Environment: ticketing.EnvLive, Origins: []string{"https://shop.example"}, Scopes: []string{auth.ScopeEventsRead}, Events: []string{"evt_a"}},
		"not an event id": {OrganizerID: "org_a", Type: auth.Secret, Environment: ticketing.EnvLive, Scopes: []string{auth.ScopeCheckinsWrite}, Events: []string{"ord_a"}},
	} {
		_, _, _, err := auth.NewKey(r, now)
		var e *ticketing.Error
		if !errors.As(err, &e) || e.Param != "events" {
			t.Errorf("%s: %v, want invalid events", name, err)
		}
	}
	if _, _, _, err := auth.NewKey(auth.KeyRequest{OrganizerID: "org_a", Type: auth.Publishable, Environment: ticketing.EnvLive,
		Origins: []string{"https://shop.example"}, Scopes: []string{auth.ScopeCheckinsWrite}}, now); err == nil {
		t.Error("a publishable key with checkins:write")
	}
}
