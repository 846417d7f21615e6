package lambdaenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"tix/internal/store"
)

// Call is one table action a function made, as IAM authorises it: a
// TransactWriteItems is one call per item.
type Call struct {
	Action string   // dynamodb:UpdateItem, ...
	PK     string   // the item's partition key ("" for Query and BatchGetItem)
	Attrs  []string // UpdateItem: the top-level attributes of its expressions
}

// recorder is a reverse proxy in front of DynamoDB Local that records the
// calls made while it is on.
type recorder struct {
	mu    sync.Mutex
	on    bool
	calls []Call
}

func newRecorder(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.note(req.Header.Get("X-Amz-Target"), body)
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	recorders.Store(srv.URL, r)
	return srv.URL
}

var recorders sync.Map // proxy URL -> *recorder

type keyed struct {
	Key  map[string]map[string]string `json:"Key"`
	Item map[string]map[string]string `json:"Item"`
	// Expressions of an update.
	UpdateExpression, ConditionExpression string
	ExpressionAttributeNames              map[string]string
}

func (k keyed) pk() string {
	if v := k.Key["PK"]["S"]; v != "" {
		return v
	}
	return k.Item["PK"]["S"]
}

var attrRe = regexp.MustCompile(`#?[A-Za-z_][A-Za-z0-9_]*`)

// attrs are the top-level attribute names an update's expressions use.
func (k keyed) attrs() []string {
	skip := map[string]bool{"SET": true, "REMOVE": true, "ADD": true, "DELETE": true, "AND": true, "OR": true, "NOT": true,
		"attribute_exists": true, "attribute_not_exists": true, "if_not_exists": true, "list_append": true, "size": true,
		"begins_with": true, "contains": true, "attribute_type": true, "BETWEEN": true, "IN": true}
	seen := map[string]bool{}
	for _, expr := range []string{k.UpdateExpression, k.ConditionExpression} {
		expr = regexp.MustCompile(`:[A-Za-z0-9_]+`).ReplaceAllString(expr, " ") // values
		for _, w := range attrRe.FindAllString(expr, -1) {
			if skip[w] {
				continue
			}
			if strings.HasPrefix(w, "#") {
				w = k.ExpressionAttributeNames[w]
			}
			seen[w] = true
		}
	}
	var out []string
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

func (r *recorder) note(target string, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on {
		return
	}
	op := target[strings.LastIndex(target, ".")+1:]
	add := func(action string, k keyed) {
		c := Call{Action: "dynamodb:" + action, PK: k.pk()}
		if action == "UpdateItem" {
			c.Attrs = k.attrs()
		}
		r.calls = append(r.calls, c)
	}
	switch op {
	case "TransactWriteItems":
		var in struct {
			TransactItems []map[string]keyed
		}
		_ = json.Unmarshal(body, &in)
		for _, it := range in.TransactItems {
			for kind, k := range it {
				add(map[string]string{"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}[kind], k)
			}
		}
	default:
		var k keyed
		_ = json.Unmarshal(body, &k)
		add(op, k)
	}
}

// Record starts recording the table calls of the function under test (the
// fixtures before it are not recorded).
func (e *Env) Record() {
	r := e.recorder()
	r.mu.Lock()
	r.on, r.calls = true, nil
	r.mu.Unlock()
}

func (e *Env) recorder() *recorder {
	v, _ := recorders.Load(e.App.Config.DynamoDBEndpoint)
	return v.(*recorder)
}

// CheckAccess fails the test for every call recorded since Record that
// store.Permissions[fn] (the function's IAM role on AWS) would deny, and
// returns the calls.
func (e *Env) CheckAccess(t *testing.T, fn string) []Call {
	t.Helper()
	r := e.recorder()
	r.mu.Lock()
	calls := append([]Call(nil), r.calls...)
	r.on = false
	r.mu.Unlock()
	if len(calls) == 0 {
		t.Fatalf("%s: no DynamoDB call recorded; is the recorder in the path?", fn)
	}
	for _, c := range calls {
		if err := Allowed(fn, c); err != nil {
			t.Errorf("%s: %v", fn, err)
		}
	}
	return calls
}

// Allowed checks one call against store.Permissions[fn], the way the stack's
// IAM statements do.
func Allowed(fn string, c Call) error {
	p, ok := store.Permissions[fn]
	if !ok {
		return fmt.Errorf("no store.Permissions entry")
	}
	has := func(list []string) bool {
		for _, a := range list {
			if a == c.Action {
				return true
			}
		}
		return false
	}
	switch {
	case has(p.Reads):
		return nil
	case p.RevokeKeys && c.Action == "dynamodb:UpdateItem" && store.IsKeyItem(c.PK):
		return attrsWithin(c, store.RevocationAttributes, "key item")
	case store.IsKeyItem(c.PK) && p.Keys && has(p.Writes):
		return nil
	case store.IsKeyItem(c.PK):
		return fmt.Errorf("%s of key item %s is denied", c.Action, c.PK)
	case p.RateLimit && c.Action == "dynamodb:UpdateItem" && strings.HasPrefix(c.PK, store.RateLimitKeyPrefix):
		if err := attrsWithin(c, store.RateLimitAttributes, "rate-limit counter"); err == nil || !has(p.Writes) {
			return err
		}
		return nil
	case has(p.Writes):
		return nil
	case p.KeyIPs && c.Action == "dynamodb:PutItem" && hasAnyPrefix(c.PK, store.KeyIPPrefixes):
		return nil
	case p.RateLimit && c.Action == "dynamodb:PutItem" && strings.HasPrefix(c.PK, store.RequestLogKeyPrefix):
		return nil
	}
	return fmt.Errorf("%s (item %q) is not in store.Permissions", c.Action, c.PK)
}

// attrsWithin checks the attributes an update names against allowed (the
// stack's dynamodb:Attributes condition): store.RateLimitAttributes for a
// rate-limit counter, store.RevocationAttributes for a key's revocation.
func attrsWithin(c Call, allowed []string, what string) error {
	for _, a := range c.Attrs {
		ok := false
		for _, pat := range allowed {
			if m, _ := path.Match(pat, a); m {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("%s of %s %s touches %q, outside %v", c.Action, what, c.PK, a, allowed)
		}
	}
	return nil
}

// CheckNoKeyItemWrites fails the test for every recorded call that wrote an
// API key's item (KEY# or KEYID#) other than a leaked key's revocation (an
// update of store.RevocationAttributes only): authenticating a request only
// reads the key and counts the request on rate-limit counters. It also fails
// when no counter was counted on, so that it cannot pass on requests never
// admitted.
func CheckNoKeyItemWrites(t *testing.T, calls []Call) {
	t.Helper()
	counted := false
	for _, c := range calls {
		revocation := c.Action == "dynamodb:UpdateItem" && attrsWithin(c, store.RevocationAttributes, "key item") == nil
		switch {
		case store.IsKeyItem(c.PK) && c.Action != "dynamodb:GetItem" && !revocation:
			t.Errorf("%s of key item %s: a request wrote its key", c.Action, c.PK)
		case c.Action == "dynamodb:UpdateItem" && strings.HasPrefix(c.PK, store.RateLimitKeyPrefix):
			counted = true
		}
	}
	if !counted {
		t.Error("no rate-limit counter was counted on: were any requests admitted?")
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// CheckCalled fails the test when no recorded call is action: the fixtures
// did not reach the path the test is about.
func CheckCalled(t *testing.T, calls []Call, action string) {
	t.Helper()
	for _, c := range calls {
		if c.Action == action {
			return
		}
	}
	t.Errorf("no %s among the %d recorded calls: the fixtures do not reach its path", action, len(calls))
}
