package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/catalogimport"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// cli runs tixctl against one test table.
type cli struct {
	t    *testing.T
	base []string
}

func newCLI(t *testing.T) (*cli, *store.Store) {
	t.Helper()
	st := testenv.Store(t, nil)
	return &cli{t: t, base: []string{"--endpoint", testenv.DynamoEndpoint(t), "--table", st.TableName()}}, st
}

// run returns the exit code, stdout and stderr.
func (c *cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	code := run(append(append([]string{}, c.base...), args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// json runs a command with --json, checks the exit code and decodes stdout,
// which must be exactly one JSON value.
func (c *cli) json(wantCode int, v any, args ...string) {
	c.t.Helper()
	code, out, errOut := c.run(append(args, "--json")...)
	if code != wantCode {
		c.t.Fatalf("tixctl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, out, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(v); err != nil {
		c.t.Fatalf("tixctl %s: stdout is not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
	if dec.More() {
		c.t.Fatalf("tixctl %s: more than one JSON value on stdout:\n%s", strings.Join(args, " "), out)
	}
}

type cliError struct {
	Error struct {
		Message  string `json:"message"`
		Code     string `json:"code"`
		Problems []struct {
			Path    string `json:"path"`
			Message string `json:"message"`
		} `json:"problems"`
	} `json:"error"`
}

type cliKey struct {
	ID             string   `json:"id"`
	Secret         string   `json:"secret"`
	Type           string   `json:"type"`
	Environment    string   `json:"environment"`
	Scopes         []string `json:"scopes"`
	AllowedOrigins []string `json:"allowed_origins"`
	AllowedIPs     []string `json:"allowed_ips"`
	ExpiresAt      *string  `json:"expires_at"`
	RevokedAt      *string  `json:"revoked_at"`
	Last4          string   `json:"last4"`
	Status         string   `json:"status"`
}

const cliCatalog = `{"events": [
  {"ref": "rock", "status": "published", "title": "Rock Night", "slug": "rock-night", "city": "Moscow", "venue": "Club",
   "starts_at": "2027-09-12T19:00:00+03:00", "ends_at": "2027-09-12T23:00:00+03:00",
   "tiers": [{"ref": "floor", "name": "Floor", "price": 250000, "capacity": 500}]},
  {"ref": "play", "title": "Play", "city": "Moscow", "venue": "Theatre", "kind": "series",
   "occurrences": [{"ref": "d1", "starts_at": "2027-10-01T19:00:00Z", "ends_at": "2027-10-01T21:00:00Z"}],
   "tiers": [{"ref": "stalls", "name": "Stalls", "price": 100000, "zone": "stalls"}],
   "seating": {"width": 100, "height": 100, "zones": [{"ref": "stalls", "name": "Stalls", "type": "seated",
     "primary_tier": "stalls", "rows": [{"row": "A", "seats": 12, "x": 0, "y": 0, "dx": 5}]}]}}
]}`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun_OperatorFlow(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()

	var org ticketing.Organizer
	c.json(0, &org, "organizers", "create", "--name", "CLI Org", "--id", "org_cli")
	if org.ID != "org_cli" || org.Name != "CLI Org" || org.Verified {
		t.Fatalf("organizer = %+v", org)
	}

	var sk cliKey
	c.json(0, &sk, "keys", "create", "--organizer", "org_cli", "--type", "sk", "--env", "test", "--ip", "10.0.0.1", "--name", "backend")
	if !strings.HasPrefix(sk.Secret, "sk_test_") || sk.Last4 != sk.Secret[len(sk.Secret)-4:] || !strings.HasPrefix(sk.ID, "key_") {
		t.Fatalf("created key = %+v", sk)
	}
	if strings.Join(sk.Scopes, ",") != strings.Join(auth.DefaultScopes(auth.Secret), ",") || strings.Join(sk.AllowedIPs, ",") != "10.0.0.1/32" {
		t.Errorf("scopes %v ips %v", sk.Scopes, sk.AllowedIPs)
	}
	stored, err := st.Keys.LookupKey(ctx, auth.Hash(sk.Secret))
	if err != nil || stored.ID != sk.ID || stored.OrganizerID != "org_cli" {
		t.Fatalf("the stored hash does not find the key: %+v, %v", stored, err)
	}

	var refused cliError
	c.json(1, &refused, "keys", "create", "--organizer", "org_cli", "--type", "sk", "--env", "live")
	if !strings.Contains(refused.Error.Message, "not verified") {
		t.Errorf("live key for an unverified organizer: %+v", refused)
	}

	c.json(0, &org, "organizers", "verify", "--id", "org_cli")
	if !org.Verified {
		t.Fatal("organizer not verified")
	}
	var live cliKey
	c.json(0, &live, "keys", "create", "--organizer", "org_cli", "--type", "sk", "--env", "live", "--expires", "720h")
	if !strings.HasPrefix(live.Secret, "sk_live_") || live.ExpiresAt == nil || live.Environment != "live" {
		t.Errorf("live key = %+v", live)
	}
	var pk cliKey
	c.json(0, &pk, "keys", "create", "--organizer", "org_cli", "--type", "pk", "--env", "test",
		"--origin", "https://Shop.example:443/", "--origin", "http://localhost:3000,https://b.example")
	if !strings.HasPrefix(pk.Secret, "pk_test_") || strings.Join(pk.AllowedOrigins, " ") != "https://shop.example http://localhost:3000 https://b.example" {
		t.Errorf("pk key = %+v", pk)
	}

	catalog := writeFile(t, "catalog.json", cliCatalog)
	var imported struct {
		OrganizerID string `json:"organizer_id"`
		Events      []struct {
			ID, Ref, Status string
			Seats           int
		} `json:"events"`
	}
	c.json(0, &imported, "catalog", "import", "--organizer", "org_cli", catalog)
	if len(imported.Events) != 2 || imported.Events[0].ID != catalogimport.CatalogEventID("org_cli", "rock") || imported.Events[1].Seats != 12 {
		t.Fatalf("import = %+v", imported)
	}
	if e, err := st.Catalog.GetEventBySlug(ctx, "org_cli", "rock-night", ticketing.EnvTest); err != nil || e.Title != "Rock Night" {
		t.Fatalf("imported event not found by slug: %v %v", e, err)
	}

	c.json(0, &imported, "catalog", "import", catalog, "--organizer", "org_cli")
	if len(imported.Events) != 2 || imported.Events[1].ID != catalogimport.CatalogEventID("org_cli", "play") {
		t.Fatalf("re-import = %+v", imported)
	}
	draft, err := st.Catalog.GetCatalogEvent(ctx, "org_cli", imported.Events[1].ID)
	if err != nil || draft.Status != ticketing.EventDraft || len(draft.Seating.Zones[0].Seats) != 12 {
		t.Fatalf("re-imported draft: %v %v", draft, err)
	}

	var revoked cliKey
	c.json(0, &revoked, "keys", "revoke", "--id", sk.ID)
	if revoked.RevokedAt == nil || revoked.Status != "revoked" || revoked.Secret != "" {
		t.Errorf("revoked = %+v", revoked)
	}
	if k, err := st.Keys.LookupKey(ctx, auth.Hash(sk.Secret)); err != nil || k.Usable(time.Now()) {
		t.Errorf("revoked key still usable: %+v %v", k, err)
	}

	var keys []cliKey
	c.json(0, &keys, "keys", "list", "--organizer", "org_cli")
	if len(keys) != 3 {
		t.Fatalf("listed %d keys, want 3", len(keys))
	}
	for _, k := range keys {
		if k.Secret != "" {
			t.Errorf("keys list shows a secret")
		}
	}
	code, out, _ := c.run("keys", "list", "--organizer", "org_cli")
	if code != 0 || !strings.Contains(out, sk.ID) || !strings.Contains(out, "revoked") || strings.Contains(out, sk.Secret) {
		t.Errorf("human keys list (exit %d):\n%s", code, out)
	}
}

func TestRun_CatalogProblemsAreListedAndNothingIsWritten(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	var org ticketing.Organizer
	c.json(0, &org, "organizers", "create", "--name", "Org")
	bad := strings.Replace(cliCatalog, `"price": 250000`, `"price": -5`, 1)
	bad = strings.Replace(bad, `"kind": "series"`, `"kind": "series", "titel": "x"`, 1)
	file := writeFile(t, "bad.json", bad)

	var failed cliError
	c.json(1, &failed, "catalog", "import", "--organizer", org.ID, file)
	var paths []string
	for _, p := range failed.Error.Problems {
		paths = append(paths, p.Path+": "+p.Message)
	}
	got := strings.Join(paths, "\n")
	if failed.Error.Code != "invalid_request" || !strings.Contains(got, "events[0].tiers[0].price: must be >= 0") || !strings.Contains(got, "events[1].titel: unknown field") {
		t.Errorf("problems = %+v", failed)
	}
	if _, err := st.Catalog.GetCatalogEvent(context.Background(), org.ID, catalogimport.CatalogEventID(org.ID, "rock")); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Errorf("an invalid import wrote something: %v", err)
	}

	code, out, errOut := c.run("catalog", "validate", file)
	if code != 1 || out != "" || !strings.Contains(errOut, "events[0].tiers[0].price: must be >= 0") {
		t.Errorf("validate (human): exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	var valid struct {
		Valid  bool `json:"valid"`
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	c.json(0, &valid, "catalog", "validate", writeFile(t, "ok.json", cliCatalog))
	if !valid.Valid || len(valid.Events) != 2 || valid.Events[0].ID != "" {
		t.Errorf("validate = %+v", valid)
	}
}

func TestRun_StdinAndUsage(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)

	var out bytes.Buffer
	a := newApp(&out, &bytes.Buffer{}, strings.NewReader(cliCatalog))
	if code := a.run(append(c.base, "catalog", "validate", "-", "--json")); code != 0 || !strings.Contains(out.String(), `"valid": true`) {
		t.Errorf("validate from stdin: exit %d\n%s", code, out.String())
	}

	cases := []struct {
		name string
		args []string
		code int
	}{
		{"NoCommand", nil, 2},
		{"UnknownCommand", []string{"tickets", "sell"}, 2},
		{"GroupWithoutVerb", []string{"keys"}, 2},
		{"MissingRequiredFlag", []string{"organizers", "create"}, 2},
		{"UnknownFlag", []string{"organizers", "list", "--colour"}, 2},
		{"BadKeyType", []string{"keys", "create", "--organizer", "org_x", "--type", "rk", "--env", "test"}, 2},
		{"PublishableNeedsOrigin", []string{"keys", "create", "--organizer", "org_x", "--type", "pk", "--env", "test"}, 2},
		{"SecretHasNoOrigin", []string{"keys", "create", "--organizer", "org_x", "--type", "sk", "--env", "test", "--origin", "https://a.b"}, 2},
		{"UnknownScope", []string{"keys", "create", "--organizer", "org_x", "--type", "sk", "--env", "test", "--scopes", "orders:everything"}, 2},
		{"ExpiryInThePast", []string{"keys", "create", "--organizer", "org_x", "--type", "sk", "--env", "test", "--expires", "2001-01-01T00:00:00Z"}, 2},
		{"UnknownOrganizer", []string{"keys", "create", "--organizer", "org_nobody", "--type", "sk", "--env", "test"}, 1},
		{"Help", []string{"help"}, 0},
		{"CommandHelp", []string{"keys", "create", "-h"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := c.run(tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if tc.code == 0 {
				return
			}
			var e cliError
			c.json(tc.code, &e, tc.args...)
			if e.Error.Message == "" || (tc.code == 2) != (e.Error.Code == "usage") {
				t.Errorf("--json error = %+v", e)
			}
		})
	}

	var created struct {
		Created bool `json:"created"`
	}
	c.json(0, &created, "table", "create")
	if created.Created {
		t.Error("table create on an existing table reported created")
	}
	var orgs []ticketing.Organizer
	c.json(0, &orgs, "organizers", "list")
	if orgs == nil || len(orgs) != 0 {
		t.Errorf("empty organizer list = %v, want []", orgs)
	}
}

func TestGlobals(t *testing.T) {
	t.Setenv("TIX_TABLE", "from-env")
	t.Setenv("TIX_DYNAMODB_ENDPOINT", "aws")
	t.Setenv("AWS_REGION", "eu-central-1")
	a := newApp(&bytes.Buffer{}, &bytes.Buffer{}, nil)
	rest, err := a.globals([]string{"keys", "list", "--json", "--organizer", "org_x"})
	if err != nil || strings.Join(rest, " ") != "keys list --organizer org_x" || !a.json {
		t.Fatalf("rest %q json %v err %v", rest, a.json, err)
	}
	if a.table != "from-env" || a.endpoint != "" || a.region != "eu-central-1" {
		t.Errorf("env: table %q endpoint %q region %q", a.table, a.endpoint, a.region)
	}
	a = newApp(&bytes.Buffer{}, &bytes.Buffer{}, nil)
	if _, err := a.globals([]string{"--table=t2", "--endpoint", "http://127.0.0.1:9000", "--region", "us-west-2", "table", "create"}); err != nil {
		t.Fatal(err)
	}
	if a.table != "t2" || a.endpoint != "http://127.0.0.1:9000" || a.region != "us-west-2" {
		t.Errorf("flags: table %q endpoint %q region %q", a.table, a.endpoint, a.region)
	}
	a = newApp(&bytes.Buffer{}, &bytes.Buffer{}, nil)
	t.Setenv("TIX_DYNAMODB_ENDPOINT", "")
	if _, err := a.globals([]string{"--endpoint", ""}); err != nil || a.endpoint != "" {
		t.Errorf(`--endpoint "" must mean AWS: %q %v`, a.endpoint, err)
	}
	a = newApp(&bytes.Buffer{}, &bytes.Buffer{}, nil)
	if _, err := a.globals(nil); err != nil || a.endpoint != defaultEndpoint {
		t.Errorf("default endpoint = %q", a.endpoint)
	}
}

// An operator sets a key's budgets ahead of an on-sale; the functions read
// them with the key. Flags not given keep their figures; 0 is the default.
func TestRun_KeysSetBudget(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()
	var org ticketing.Organizer
	c.json(0, &org, "organizers", "create", "--name", "Budget Org", "--id", "org_budget")
	var pk, sk cliKey
	c.json(0, &pk, "keys", "create", "--organizer", "org_budget", "--type", "pk", "--env", "test", "--origin", "https://shop.example")
	c.json(0, &sk, "keys", "create", "--organizer", "org_budget", "--type", "sk", "--env", "test")

	type budgeted struct {
		ID         string           `json:"id"`
		Status     string           `json:"status"`
		RateLimits *auth.RateLimits `json:"rate_limits"`
	}
	var got budgeted
	c.json(0, &got, "keys", "set-budget", "--id", pk.ID, "--reads", "3000000", "--writes", "300000", "--ip-reads", "120")
	want := auth.RateLimits{Reads: 3000000, Writes: 300000, IPReads: 120}
	if got.ID != pk.ID || got.Status != "active" || got.RateLimits == nil || *got.RateLimits != want {
		t.Fatalf("set-budget = %+v, want %+v", got, want)
	}
	c.json(0, &got, "keys", "set-budget", "--id", pk.ID, "--ip-writes", "5", "--reads", "0")
	want = auth.RateLimits{Writes: 300000, IPReads: 120, IPWrites: 5}
	if got.RateLimits == nil || *got.RateLimits != want {
		t.Fatalf("second set-budget = %+v, want %+v", got.RateLimits, want)
	}
	k, err := st.Keys.LookupKey(ctx, auth.Hash(pk.Secret))
	if err != nil || k.RateLimits == nil || *k.RateLimits != want {
		t.Fatalf("the functions read %+v (%v), want %+v", k, err, want)
	}

	code, out, _ := c.run("keys", "set-budget", "--id", sk.ID, "--reads", "1200")
	if code != 0 || !strings.Contains(out, "reads 1200") || !strings.Contains(out, "order and hold creations default") {
		t.Errorf("sk set-budget (exit %d):\n%s", code, out)
	}
	for _, bad := range [][]string{
		{"--id", sk.ID, "--ip-reads", "10"},
		{"--id", pk.ID, "--reads", "-1"},
		{"--id", pk.ID},
	} {
		if code, _, _ := c.run(append([]string{"keys", "set-budget"}, bad...)...); code != 2 {
			t.Errorf("set-budget %v: exit %d, want 2 (usage)", bad, code)
		}
	}
	if code, _, _ := c.run("keys", "set-budget", "--id", "key_missing", "--reads", "5"); code != 1 {
		t.Errorf("unknown key: exit %d, want 1", code)
	}
	if k, _ := st.Keys.LookupKey(ctx, auth.Hash(sk.Secret)); k.RateLimits == nil || *k.RateLimits != (auth.RateLimits{Reads: 1200}) {
		t.Errorf("a refused set-budget changed the sk key: %+v", k.RateLimits)
	}
}
