package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"tix/internal/app"

	"tix/internal/auth"
	"tix/internal/emailsend/emailtest"
	"tix/internal/secretscan"
	"tix/internal/secretscan/scantest"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// End to end on the local stack, with a simulated GitHub (its own key pair
// and published key list): a signed report of a live secret key revokes it
// (the next request with it, past the key cache's lifetime, is 401) and one
// email reaches the owner's inbox in MailDev, naming the key by id and last
// four characters and where it was found, never the key; the same report
// again changes nothing and sends nothing; reports that do not verify change
// nothing; a publishable key and a random string are false positives.
func TestSecretScanning_LeakedKeyRevokedAndOwnerToldOnce(t *testing.T) {
	rep := scantest.New()
	t.Cleanup(rep.Close)
	m := newMailStack(t, map[string]string{"TIX_SECRET_SCANNING_KEYS_URL": rep.KeysURL(), "TIX_KEY_CACHE_TTL": "1s"})
	ctx, a := m.ctx, m.app
	app.EnableSecretScanning(a)
	owner := emailtest.NewAddress("owner")
	if _, err := a.Store.Emails.SetContacts(ctx, "org_mail", []string{owner}); err != nil {
		t.Fatal(err)
	}
	key := func(typ auth.KeyType, env ticketing.Environment) (string, auth.Key) {
		secret := auth.NewSecret(typ, env)
		k := auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_mail", Type: typ, Environment: env, Scopes: auth.DefaultScopes(typ),
			Last4: secret[len(secret)-4:], CreatedAt: time.Now().UTC()}
		if err := a.Store.Keys.CreateKey(ctx, k, auth.Hash(secret)); err != nil {
			t.Fatal(err)
		}
		return secret, k
	}
	sk, skKey := key(auth.Secret, ticketing.EnvLive)
	other, _ := key(auth.Secret, ticketing.EnvLive)
	pk, _ := key(auth.Publishable, ticketing.EnvLive)
	srv := httptest.NewServer(a.Server.Handler())
	t.Cleanup(srv.Close)
	ping := func(secret string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/ping", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	if ping(sk) != 200 {
		t.Fatal("the key does not work before the report")
	}
	endpoint := srv.URL + "/v1/secret-scanning/github"
	const where = "https://github.com/octo/shop/blob/0123abc/deploy/.env"
	ms := []secretscan.Match{
		{Token: sk, Type: "tix_secret_key", URL: where, Source: "content"},
		{Token: pk, Type: "tix_secret_key", URL: where, Source: "content"},
		{Token: "sk_live_" + auth.RandomString("abcdefghijklmnopqrstuvwxyz", 38), Type: "tix_secret_key", URL: where, Source: "commit"},
	}

	// Reports that do not verify: altered body, another reporter's key.
	body := scantest.Body(ms...)
	id := rep.CurrentKeyID()
	stranger := scantest.New()
	defer stranger.Close()
	for name, req := range map[string][3]string{
		"altered body":  {strings.Replace(string(body), "0123abc", "0123abd", 1), id, rep.Sign(id, body)},
		"unknown key":   {string(body), stranger.CurrentKeyID(), stranger.Sign(stranger.CurrentKeyID(), body)},
		"bad signature": {string(body), id, stranger.Sign(stranger.CurrentKeyID(), body)},
	} {
		r, _ := scantest.Request(endpoint, []byte(req[0]), req[1], req[2])
		res, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s: status %d, want 401", name, res.StatusCode)
		}
	}
	if k, _ := a.Store.Keys.KeyByID(ctx, skKey.ID); k.RevokedAt != nil {
		t.Fatalf("an unverified report revoked the key: %+v", k)
	}

	for round := range 2 {
		status, fb, err := rep.Report(srv.Client(), endpoint, ms...)
		if err != nil || status != 200 || len(fb) != 3 {
			t.Fatalf("round %d: %d %v %v", round, status, fb, err)
		}
		for i, want := range []string{secretscan.TruePositive, secretscan.FalsePositive, secretscan.FalsePositive} {
			if fb[i].Label != want || fb[i].TokenRaw != ms[i].Token || fb[i].TokenType != "tix_secret_key" {
				t.Fatalf("round %d: feedback %d %+v, want %s", round, i, fb[i], want)
			}
		}
		if round == 0 {
			testenv.WaitFor(t, 5*time.Second, "the revoked key to be refused", func() bool { return ping(sk) == http.StatusUnauthorized })
		}
	}
	if ping(other) != 200 || ping(pk) == http.StatusUnauthorized {
		t.Fatal("a key the report did not name as a tix secret key stopped working")
	}
	raw, err := m.inbox.Raw(ctx, owner, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p, err := emailtest.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	label := "sk_live_..." + skKey.Last4
	for _, part := range []string{p.Subject + p.Text, p.HTML} {
		if !strings.Contains(part, skKey.ID) || strings.Contains(part, sk) {
			t.Fatalf("alert names the key by id, never the key: %q\n%s", p.Subject, p.Text)
		}
	}
	if !strings.Contains(p.Text, label) || !strings.Contains(p.Text, where) || !(strings.Contains(p.Text, "new secret key") || strings.Contains(p.Text, "новый секретный ключ")) {
		t.Fatalf("alert does not say which key, where and what to do:\n%s", p.Text)
	}
	time.Sleep(2 * time.Second) // what a second email would have needed
	if n, err := m.inbox.Count(ctx, owner); err != nil || n != 1 {
		t.Fatalf("the owner got %d emails (%v), want 1", n, err)
	}
}
