package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/emailjobs"
	"tix/internal/secretscan"
	"tix/internal/secretscan/keylist"
	"tix/internal/secretscan/scantest"
	"tix/internal/ticketing"
)

// keys revoke --leaked, by the key itself: the key is revoked as leaked with
// its source, the owner's alert is the secret scanning report's (once per
// key), keys show prints the reason and source and never the key; a second
// revocation keeps the first; a publishable key is refused.
func TestKeysRevokeLeaked_ByHandAsAReportDoes(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()
	var org ticketing.Organizer
	c.json(0, &org, "organizers", "create", "--name", "Leaks", "--id", "org_leak")
	var id map[string]any
	c.json(0, &id, "organizers", "set-contacts", "--id", "org_leak", "--email", "owner@leak.example")
	var sk, pk cliKey
	c.json(0, &sk, "keys", "create", "--organizer", "org_leak", "--type", "sk", "--env", "test")
	c.json(0, &pk, "keys", "create", "--organizer", "org_leak", "--type", "pk", "--env", "test", "--origin", "https://shop.example")
	if !auth.HasChecksum(sk.Secret) || !auth.HasChecksum(pk.Secret) {
		t.Fatalf("new keys without a checksum: %s %s", sk.Secret, pk.Secret)
	}
	const src = "https://github.com/octo/shop/blob/0123abc/.env"

	for _, bad := range [][]string{
		{"keys", "revoke", "--leaked", "--source", "not a url", sk.ID},
		{"keys", "revoke", "--source", src, sk.ID},
		{"keys", "revoke"},
		{"keys", "revoke", "--id", sk.ID, sk.ID},
		{"keys", "revoke", "--leaked", pk.ID},
	} {
		if code, _, _ := c.run(bad...); code != 2 {
			t.Errorf("tixctl %s: exit %d, want 2", strings.Join(bad, " "), code)
		}
	}
	code, out, errOut := c.run("keys", "revoke", "--leaked", "--source", src, sk.Secret)
	if code != 0 || strings.Contains(out+errOut, sk.Secret) || !strings.Contains(out, sk.ID) || !strings.Contains(errOut, "1 contact(s)") {
		t.Fatalf("revoke --leaked (exit %d):\n%s\n%s", code, out, errOut)
	}
	var shown struct {
		cliKey
		RevokeReason string `json:"revoke_reason"`
		LeakSource   string `json:"leak_source"`
	}
	c.json(0, &shown, "keys", "show", sk.ID)
	if shown.Status != "revoked" || shown.RevokeReason != auth.RevokedLeaked || shown.LeakSource != src || shown.Secret != "" {
		t.Fatalf("keys show: %+v", shown)
	}
	code, out, _ = c.run("keys", "show", sk.Secret)
	if code != 0 || !strings.Contains(out, "reason:  leaked") || !strings.Contains(out, "source:  "+src) || strings.Contains(out, sk.Secret) {
		t.Fatalf("keys show by the key (exit %d):\n%s", code, out)
	}
	j, err := st.Emails.GetJob(ctx, "org_leak/alert."+emailjobs.CauseKeyLeaked+"."+sk.ID+".0")
	if err != nil || j.To != "owner@leak.example" || j.Alert.URL != src || j.Alert.Key != "sk_test_..."+sk.Last4 {
		t.Fatalf("alert job %+v %v", j, err)
	}
	// Again, by id, from elsewhere: the first revocation stays, nothing more is written.
	code, out, errOut = c.run("keys", "revoke", "--leaked", "--source", "https://example.com/paste", "--id", sk.ID)
	if code != 0 || !strings.Contains(out, "first revocation stays") || strings.Contains(errOut, "contact(s)") {
		t.Fatalf("second revoke (exit %d):\n%s\n%s", code, out, errOut)
	}
	c.json(0, &shown, "keys", "show", "--id", sk.ID)
	if shown.LeakSource != src {
		t.Fatalf("the second revocation replaced the source: %+v", shown)
	}
	var e cliError
	c.json(1, &e, "keys", "show", "key_nope")
	if e.Error.Code != "not_found" {
		t.Fatalf("unknown key: %+v", e)
	}
}

// scan-sim report: the local stack's simulated GitHub signs the tokens and
// sends them to tix's endpoint (through the real router); the secret key is
// revoked as leaked, the rest are false positives; the output never shows a key.
func TestScanSimReport_RevokesThroughTheEndpoint(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	rep := scantest.NewReporter()
	srv := &api.Server{Keys: st.Keys, Health: st, Clock: clock.System{}}
	tix := httptest.NewServer(srv.Handler())
	t.Cleanup(tix.Close)
	sim := httptest.NewServer(rep.Handler(tix.URL + "/v1/secret-scanning/github"))
	t.Cleanup(sim.Close)
	srv.SecretScanning = &secretscan.Service{Keys: st.Keys, Clock: clock.System{},
		Publisher: &keylist.List{URL: sim.URL + scantest.KeysPath, TTL: time.Hour}}
	var org ticketing.Organizer
	c.json(0, &org, "organizers", "create", "--name", "Sim", "--id", "org_scan")
	var sk cliKey
	c.json(0, &sk, "keys", "create", "--organizer", "org_scan", "--type", "sk", "--env", "test")
	code, out, errOut := c.run("scan-sim", "report", "--url", sim.URL, "--source", "https://github.com/o/r/blob/1/.env", sk.Secret, "not-a-key")
	if code != 0 || !strings.Contains(out, "true_positive  sk_test_..."+sk.Last4) || !strings.Contains(out, "false_positive  (9 characters") ||
		strings.Contains(out, sk.Secret) {
		t.Fatalf("scan-sim report (exit %d):\n%s\n%s", code, out, errOut)
	}
	k, err := st.Keys.KeyByID(context.Background(), sk.ID)
	if err != nil || k.RevokeReason != auth.RevokedLeaked || k.LeakSource != "https://github.com/o/r/blob/1/.env" {
		t.Fatalf("key after the simulated report: %+v %v", k, err)
	}
	if code, _, _ := c.run("scan-sim", "report", "--url", sim.URL); code != 2 {
		t.Errorf("no token: exit %d, want 2", code)
	}
}
