package secretscan_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/secretscan"
	"tix/internal/secretscan/keylist"
	"tix/internal/secretscan/scantest"
	"tix/internal/ticketing"
)

// memKeys is an in-memory key store with the DynamoDB store's rule: the first
// revocation wins.
type memKeys struct {
	mu   sync.Mutex
	keys map[string]*auth.Key // by hash
}

func (m *memKeys) add(typ auth.KeyType, env ticketing.Environment) (string, *auth.Key) {
	secret := auth.NewSecret(typ, env)
	k := &auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_a", Type: typ, Environment: env, Last4: secret[len(secret)-4:]}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys == nil {
		m.keys = map[string]*auth.Key{}
	}
	m.keys[auth.Hash(secret)] = k
	return secret, k
}

func (m *memKeys) RevokeKeyByHash(_ context.Context, hash string, rev auth.Revocation) (*auth.Key, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[hash]
	if !ok {
		return nil, false, auth.ErrUnknownKey
	}
	if k.RevokedAt != nil {
		c := *k
		return &c, false, nil
	}
	at := rev.At
	k.RevokedAt, k.RevokeReason, k.LeakSource = &at, rev.Reason, rev.Source
	c := *k
	return &c, true, nil
}

// memAlerts keeps one alert per key, as the email pipeline does.
type memAlerts struct {
	mu   sync.Mutex
	sent map[string]string // key id -> the alert's text
}

func (a *memAlerts) KeyLeaked(_ context.Context, org, keyID, label, source string, at time.Time) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sent == nil {
		a.sent = map[string]string{}
	}
	if _, ok := a.sent[keyID]; ok {
		return 0, nil
	}
	a.sent[keyID] = strings.Join([]string{org, keyID, label, source}, " ")
	return 1, nil
}

type fixture struct {
	rep    *scantest.Reporter
	keys   *memKeys
	alerts *memAlerts
	svc    *secretscan.Service
	clock  *clock.Fixed
}

func newFixture(t *testing.T) *fixture {
	rep := scantest.New()
	t.Cleanup(rep.Close)
	c := clock.NewFixed(time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC))
	f := &fixture{rep: rep, keys: &memKeys{}, alerts: &memAlerts{}, clock: c}
	f.svc = &secretscan.Service{Publisher: &keylist.List{URL: rep.KeysURL(), TTL: time.Hour, Now: c.Now},
		Keys: f.keys, Alerts: f.alerts, Clock: c}
	return f
}

func (f *fixture) report(ms ...secretscan.Match) ([]secretscan.Feedback, error) {
	body := scantest.Body(ms...)
	id := f.rep.CurrentKeyID()
	return f.svc.Report(context.Background(), id, f.rep.Sign(id, body), body)
}

// A signed report revokes the tix secret keys it names, with the URL where
// they were found, alerts each owner once, and answers true_positive for
// them only: a publishable key (public by design), a well-formed key no one
// holds and a random string are false positives, and nothing of theirs changes.
func TestReport_RevokesSecretKeysOnlyAndAlertsOnce(t *testing.T) {
	f := newFixture(t)
	sk, skKey := f.keys.add(auth.Secret, ticketing.EnvLive)
	pk, pkKey := f.keys.add(auth.Publishable, ticketing.EnvLive)
	nobody := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	const url = "https://github.com/octo/shop/blob/0123abc/config.env"
	ms := []secretscan.Match{
		{Token: sk, Type: "tix_secret_key", URL: url, Source: "content"},
		{Token: pk, Type: "tix_secret_key", URL: url, Source: "content"},
		{Token: nobody, Type: "tix_secret_key", URL: url, Source: "commit"},
		{Token: "sk_live_not-a-key", Type: "tix_secret_key", URL: url, Source: "content"},
	}
	want := []string{secretscan.TruePositive, secretscan.FalsePositive, secretscan.FalsePositive, secretscan.FalsePositive}
	for round := range 2 {
		fb, err := f.report(ms...)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for i, m := range ms {
			if fb[i].TokenRaw != m.Token || fb[i].TokenType != m.Type || fb[i].Label != want[i] {
				t.Fatalf("round %d: feedback %d = %+v, want %s for %q", round, i, fb[i], want[i], m.Token)
			}
		}
		f.clock.Advance(time.Minute)
	}
	if skKey.RevokedAt == nil || !skKey.RevokedAt.Equal(time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)) ||
		skKey.RevokeReason != auth.RevokedLeaked || skKey.LeakSource != url {
		t.Fatalf("secret key after two reports: %+v", skKey)
	}
	if pkKey.RevokedAt != nil {
		t.Fatalf("publishable key revoked: %+v", pkKey)
	}
	if len(f.alerts.sent) != 1 {
		t.Fatalf("alerts: %v, want one for %s", f.alerts.sent, skKey.ID)
	}
	text := f.alerts.sent[skKey.ID]
	if !strings.Contains(text, "sk_live_..."+skKey.Last4) || !strings.Contains(text, url) || strings.Contains(text, sk) {
		t.Fatalf("alert %q: want the key's kind and last 4 and the URL, never the key", text)
	}
}

// A report that does not verify changes nothing: no headers, a signature
// that is no base64, a key the reporter never published, one it retired (a
// stale report), a signature by another reporter, an altered body.
func TestReport_UnverifiedReportsChangeNothing(t *testing.T) {
	f := newFixture(t)
	sk, skKey := f.keys.add(auth.Secret, ticketing.EnvLive)
	body := scantest.Body(secretscan.Match{Token: sk, Type: "tix_secret_key", URL: "https://github.com/o/r/blob/1/f"})
	cur := f.rep.CurrentKeyID()
	other := scantest.New()
	defer other.Close()
	altered := []byte(strings.Replace(string(body), "/o/r/", "/o/x/", 1))
	old := cur
	cur = f.rep.Rotate()
	f.rep.Retire(old)
	cases := map[string]struct {
		id, sig string
		body    []byte
	}{
		"no headers":        {"", "", body},
		"no signature":      {cur, "", body},
		"not base64":        {cur, "%%%", body},
		"unknown key":       {other.CurrentKeyID(), other.Sign(other.CurrentKeyID(), body), body},
		"retired key":       {old, f.rep.Sign(old, body), body},
		"another's key":     {cur, other.Sign(other.CurrentKeyID(), body), body},
		"altered body":      {cur, f.rep.Sign(cur, body), altered},
		"signature of void": {cur, f.rep.Sign(cur, nil), body},
	}
	for name, c := range cases {
		fb, err := f.svc.Report(context.Background(), c.id, c.sig, c.body)
		if !ticketing.IsCode(err, ticketing.CodeUnauthorized) || fb != nil {
			t.Errorf("%s: %v %v, want unauthorized", name, fb, err)
		}
		f.clock.Advance(2 * time.Minute) // past the list's refetch gap
	}
	if skKey.RevokedAt != nil || len(f.alerts.sent) != 0 {
		t.Fatalf("an unverified report changed something: %+v, alerts %v", skKey, f.alerts.sent)
	}
	// The same body, signed by the current key, does revoke it.
	if fb, err := f.svc.Report(context.Background(), cur, f.rep.Sign(cur, body), body); err != nil || fb[0].Label != secretscan.TruePositive {
		t.Fatalf("signed report: %v %v", fb, err)
	}
}

// A signed report whose body is no report changes nothing and says what is wrong.
func TestReport_MalformedSignedBodyIsInvalid(t *testing.T) {
	f := newFixture(t)
	for body, param := range map[string]string{
		`{"token":"x"}`:               "body",
		`[{"type":"t"}]`:              "[0].token",
		`[{"token":"a","token":"b"}]`: "[0].token",
		`not json`:                    "body",
		`null`:                        "body",
	} {
		id := f.rep.CurrentKeyID()
		_, err := f.svc.Report(context.Background(), id, f.rep.Sign(id, []byte(body)), []byte(body))
		var e *ticketing.Error
		if !ticketing.IsCode(err, ticketing.CodeInvalidRequest) || !asError(err, &e) || e.Param != param {
			t.Errorf("%s: %v, want invalid_request on %s", body, err, param)
		}
	}
}

// Reports naming keys the list does not hold make tix fetch the list again
// at most once per refetch gap, however many arrive; a key the reporter
// rotated in is found by that refetch.
func TestKeyList_RefetchOnUnknownKeyIsRateLimited(t *testing.T) {
	f := newFixture(t)
	if _, err := f.report(); err != nil {
		t.Fatal(err)
	}
	if n := f.rep.Fetches(); n != 1 {
		t.Fatalf("fetches after the first report: %d", n)
	}
	stranger := scantest.New()
	defer stranger.Close()
	for range 50 {
		id := stranger.CurrentKeyID()
		if _, err := f.svc.Report(context.Background(), id, stranger.Sign(id, []byte("[]")), []byte("[]")); !ticketing.IsCode(err, ticketing.CodeUnauthorized) {
			t.Fatalf("stranger's report: %v", err)
		}
	}
	if n := f.rep.Fetches(); n != 1 {
		t.Fatalf("50 reports under an unknown key within a minute fetched the list %d times, want 1 (the first)", n)
	}
	f.rep.Rotate()
	f.clock.Advance(keylist.DefaultMinRefetch)
	if _, err := f.report(); err != nil {
		t.Fatalf("report under the rotated key: %v", err)
	}
	if n := f.rep.Fetches(); n != 2 {
		t.Fatalf("fetches after the rotation: %d, want 2", n)
	}
}

func asError(err error, e **ticketing.Error) bool {
	return errors.As(err, e)
}

// A key list that cannot be read fails the report (GitHub sends it again)
// rather than refusing it, and is not asked again within the refetch gap.
func TestKeyList_UnreadableListFailsTheReport(t *testing.T) {
	c := clock.NewFixed(time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC))
	rep := scantest.New()
	rep.Close() // nothing answers at its URL
	svc := &secretscan.Service{Publisher: &keylist.List{URL: rep.KeysURL(), TTL: time.Hour, Now: c.Now}, Keys: &memKeys{}, Clock: c}
	body := []byte("[]")
	for range 2 {
		_, err := svc.Report(context.Background(), rep.CurrentKeyID(), rep.Sign(rep.CurrentKeyID(), body), body)
		var e *ticketing.Error
		if err == nil || errors.As(err, &e) {
			t.Fatalf("report with no key list: %v, want an internal error", err)
		}
	}
}
