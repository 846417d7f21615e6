package lambdaenv_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/api"
	"tix/internal/testenv"
)

// routeInfo is one route of the router, as RouteKeys lists it.
type routeInfo struct {
	key      string // "METHOD /pattern"
	method   string
	segments []string
	group    api.Group
}

func (r routeInfo) literals() int {
	n := 0
	for _, s := range r.segments {
		if !strings.HasPrefix(s, "{") {
			n++
		}
	}
	return n
}

// matches is the router's path match: as many segments, literals equal,
// a parameter any non-empty segment (a {{PLACEHOLDER}} is one).
func (r routeInfo) matches(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != len(r.segments) {
		return false
	}
	for i, s := range r.segments {
		if strings.HasPrefix(s, "{") {
			if parts[i] == "" {
				return false
			}
		} else if s != parts[i] {
			return false
		}
	}
	return true
}

// routerRoutes is every route with its group, in the router's match order
// (literal segments first, then table order).
func routerRoutes(t *testing.T) []routeInfo {
	t.Helper()
	srv := &api.Server{}
	srv.EnableDoor(nil, nil)                       // the door's routes too (app.EnableDoor)
	srv.EnableTransfers(nil)                       // and the transfers' (app.EnableDoor)
	srv.EnableWaitingRoom(nil, api.QueueLookups{}) // and the waiting room's (app.New)
	var rs []routeInfo
	for _, g := range api.AllGroups {
		for _, k := range srv.RouteKeys(g) {
			method, pattern, ok := strings.Cut(k, " ")
			if !ok || !strings.HasPrefix(pattern, "/") {
				t.Fatalf("RouteKeys gave %q, want \"METHOD /pattern\"", k)
			}
			rs = append(rs, routeInfo{key: k, method: method, segments: strings.Split(strings.Trim(pattern, "/"), "/"), group: g})
		}
	}
	if all := srv.RouteKeys(); len(all) != len(rs) {
		t.Fatalf("RouteKeys() lists %d routes, its groups %d: a route of no known group?", len(all), len(rs))
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].literals() > rs[j].literals() })
	return rs
}

// route finds the route the router would serve method and path (below /v1)
// with; when none, pathOwners are the routes of that path under other methods
// (the router answers 405).
func route(rs []routeInfo, method, path string) (match *routeInfo, pathOwners []routeInfo) {
	for i, r := range rs {
		if !r.matches(path) {
			continue
		}
		if r.method == method || (method == "HEAD" && r.method == "GET") {
			return &rs[i], nil
		}
		pathOwners = append(pathOwners, r)
	}
	return nil, pathOwners
}

// sample is one events/*.json file, in whichever of the three shapes it has.
type sample struct {
	events.APIGatewayV2HTTPRequest
	Records    []events.SQSMessage `json:"Records"`
	DetailType string              `json:"detail-type"`
	Expect     *struct {
		Status int `json:"status"`
	} `json:"_expect"`
}

// functionNames are the Lambda functions: the folders of functions/.
func functionNames(t *testing.T) []string {
	t.Helper()
	dirs, err := os.ReadDir(filepath.Join(testenv.EventsDir(), "..", "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if d.IsDir() {
			out = append(out, d.Name())
		}
	}
	if len(out) == 0 {
		t.Fatal("no functions/*")
	}
	return out
}

// dashboardFunction serves the organizer dashboard's pages, not an API group.
const dashboardFunction = "dashboard"

// No route in this list needs a 2xx sample event (none today: every route
// has one). Add a route only when no fixture can make it succeed.
var no2xx = map[string]bool{}

// Every route of the router has a sample API Gateway event, with a 2xx among
// them, in the file of the function that serves the route's group; every
// sample event is routed to the function its file is named after (the file
// prefix is the function); every queue consumer has an SQS batch; and the
// events keep the format the function tests rely on. The function tests
// (functions/*/main_test.go) feed each <function>-*.json to that function's
// handler and check _expect.status.
func TestSampleEvents_CoverEveryRouteAndFunction(t *testing.T) {
	rs := routerRoutes(t)
	functions := functionNames(t)
	httpFunctions := map[string]bool{}
	httpFunctions[dashboardFunction] = true
	for _, g := range api.AllGroups {
		httpFunctions[string(g)] = true
		if !slices.Contains(functions, string(g)) {
			t.Errorf("group %s has no function functions/%s", g, g)
		}
	}
	files, err := filepath.Glob(filepath.Join(testenv.EventsDir(), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events/*.json: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join(testenv.EventsDir(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}

	covered := map[string][]string{} // route key -> files
	succeeded := map[string]bool{}   // route key -> a file expects 2xx
	sqsBatches := map[string][]string{}
	schedules := map[string][]string{}
	perFunction := map[string]int{}
	for _, f := range files {
		name := filepath.Base(f)
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range testenv.Placeholders(raw) {
			if !strings.Contains(string(readme), "{{"+p+"}}") {
				t.Errorf("%s: placeholder {{%s}} is not described in events/README.md", name, p)
			}
		}
		fn, _, ok := strings.Cut(strings.TrimSuffix(name, ".json"), "-")
		if !ok || !slices.Contains(functions, fn) {
			t.Errorf("%s: name it <function>-<what>.json, <function> one of %v", name, functions)
			continue
		}
		perFunction[fn]++
		var s sample
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		switch {
		case s.RequestContext.HTTP.Method != "":
			checkAPIEvent(t, name, fn, s, rs, httpFunctions, covered, succeeded)
		case len(s.Records) > 0:
			for i, r := range s.Records {
				if r.EventSource != "aws:sqs" || r.MessageId == "" {
					t.Errorf("%s: record %d is not an SQS message (eventSource %q, messageId %q)", name, i, r.EventSource, r.MessageId)
				}
			}
			sqsBatches[fn] = append(sqsBatches[fn], name)
		case s.DetailType == "Scheduled Event":
			schedules[fn] = append(schedules[fn], name)
		default:
			t.Errorf("%s: neither an API Gateway v2 event, an SQS batch nor a scheduled event", name)
		}
	}

	for _, r := range rs {
		switch {
		case len(covered[r.key]) == 0:
			t.Errorf("route %s (group %s) has no sample event: add events/%s-<what>.json", r.key, r.group, r.group)
		case !succeeded[r.key] && !no2xx[r.key]:
			t.Errorf("route %s has sample events %v but none expects a 2xx", r.key, covered[r.key])
		}
	}
	for _, fn := range functions {
		if perFunction[fn] == 0 {
			t.Errorf("function %s has no sample event events/%s-*.json", fn, fn)
		}
		if !httpFunctions[fn] && len(sqsBatches[fn]) == 0 {
			t.Errorf("queue consumer %s has no SQS sample batch events/%s-*.json", fn, fn)
		}
	}
	for fn, names := range sqsBatches {
		if httpFunctions[fn] {
			t.Errorf("%v: an SQS batch for %s, which serves API Gateway", names, fn)
		}
	}
	for fn, names := range schedules {
		if fn != "timers" {
			t.Errorf("%v: a scheduled event for %s; only timers takes the EventBridge schedule", names, fn)
		}
	}
	if len(schedules["timers"]) == 0 {
		t.Error("timers has no EventBridge scheduled sample event")
	}
	if !t.Failed() {
		var lines []string
		for _, r := range rs {
			lines = append(lines, fmt.Sprintf("%-45s %v", r.key, covered[r.key]))
		}
		t.Logf("routes and their sample events:\n%s", strings.Join(lines, "\n"))
	}
}

// checkAPIEvent checks one API Gateway v2 sample: its format, and that the
// route it reaches belongs to the group of the function it is named after.
func checkAPIEvent(t *testing.T, name, fn string, s sample, rs []routeInfo, httpFunctions map[string]bool,
	covered map[string][]string, succeeded map[string]bool) {
	t.Helper()
	ctx := s.RequestContext
	method := ctx.HTTP.Method
	if !httpFunctions[fn] {
		t.Errorf("%s: an API Gateway event for %s, which serves no API group", name, fn)
		return
	}
	if s.Version != "2.0" {
		t.Errorf("%s: version %q, want 2.0 (HTTP API payload format)", name, s.Version)
	}
	if ctx.HTTP.Path != s.RawPath {
		t.Errorf("%s: requestContext.http.path %q differs from rawPath %q", name, ctx.HTTP.Path, s.RawPath)
	}
	if ctx.Stage != "v1" || !strings.HasPrefix(s.RawPath, "/v1/") {
		t.Errorf("%s: stage %q, rawPath %q; API Gateway sends the v1 stage as a /v1 prefix", name, ctx.Stage, s.RawPath)
	}
	if ctx.HTTP.SourceIP != "198.51.100.7" {
		t.Errorf("%s: sourceIp %q; the lambdaenv key allows only 198.51.100.7", name, ctx.HTTP.SourceIP)
	}
	if s.Headers["x-forwarded-for"] == "" {
		t.Errorf("%s: no x-forwarded-for decoy (the service must use requestContext.http.sourceIp)", name)
	}
	if s.Expect == nil || s.Expect.Status < 100 {
		t.Errorf("%s: no _expect.status", name)
	}
	path := strings.TrimPrefix(s.RawPath, "/v1")
	if fn == dashboardFunction || path == "/dashboard" || strings.HasPrefix(path, "/dashboard/") {
		// The dashboard's pages are routed by path to their own function
		// (infra Routes /dashboard, /dashboard/{proxy+}), not by the router.
		if fn != dashboardFunction || path != "/dashboard" && !strings.HasPrefix(path, "/dashboard/") {
			t.Errorf("%s: %s is for the dashboard function only, and it serves only /v1/dashboard paths", name, s.RawPath)
		}
		return
	}
	r, pathOwners := route(rs, method, path)
	if r == nil {
		// No route: a path some route has answers 405 from that route's
		// function; any other reaches $default, the catalog function.
		owner := string(api.GroupCatalog)
		if len(pathOwners) > 0 {
			owner = string(pathOwners[0].group)
		}
		if fn != owner {
			t.Errorf("%s: %s %s matches no route; API Gateway sends it to %s, not %s", name, method, s.RawPath, owner, fn)
		}
		return
	}
	if string(r.group) != fn {
		t.Errorf("%s: %s %s is route %s of group %s; the file is named for function %s", name, method, s.RawPath, r.key, r.group, fn)
		return
	}
	covered[r.key] = append(covered[r.key], name)
	if s.Expect != nil && s.Expect.Status/100 == 2 {
		succeeded[r.key] = true
	}
}
