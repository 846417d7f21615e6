package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"tix/internal/api"
	"tix/internal/auth"
)

// updateGolden reports whether -update (defined beside the openapi.json test)
// was given: it rewrites the golden files under testdata/ from what the code
// answers now (go test ./internal/api -run Golden -update).
func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// The golden routing table: every route and the paths around them, each with
// every method, without a key and with a secret key holding every scope,
// through the whole API and through each group's function, and the CORS
// preflights. A line records the status, every header (Tix-Request-Id masked)
// and the body (request ids masked; a large body by length and hash).
const routingGolden = "testdata/routing.golden"

var (
	requestIDs   = regexp.MustCompile(`req_[0-9a-f]{24}`)
	responseTime = regexp.MustCompile(`"response_time_ms":[0-9]+`)
	// Keys are made with random ids and secrets.
	keyIDs = regexp.MustCompile(`"key_id":"key_[A-Za-z0-9]+","last4":"[^"]*"`)
	// A ticket signing key is made at random on first need.
	ticketKeyIDs = regexp.MustCompile(`"kid":"tk_[0-9a-f]+","x":"[^"]*"`)
)

// routeSamplePath fills a route's {name} segments with sample values no
// record has, so that keyed requests reach the handler and its not-found.
func routeSamplePath(pattern string) string {
	r := strings.NewReplacer("{id}", "nope_1", "{slug}", "nope-slug", "{asset}", "redoc.standalone.js.LICENSE.txt")
	return "/v1" + r.Replace(pattern)
}

// trickyPaths are the paths around the routes: unknown ones, trailing and
// double slashes, encoded slashes and dots, the version prefix, precedence
// between a literal and a parameter.
var trickyPaths = []string{
	"/", "/v1", "/v1/", "/v2/events", "/v1x/health", "/v1/v1/health", "/health", "/events", "/ping",
	"/v1/nope", "/v1/events/", "/v1/events//", "/v1//events", "/v1/events/nope_1/", "/v1/events//tiers",
	"/v1/events/nope_1//tiers", "/v1/events/nope_1/tiers/", "/v1/events/nope_1/tiers/x", "/v1/events/a%2Fb",
	"/v1/events/a%2Fb/tiers", "/v1/events/caf%C3%A9", "/v1/events/%2E%2E/tiers", "/v1/events/../tiers",
	"/v1/events/./tiers", "/v1/events/..", "/v1/events/.", "/v1/events/by-slug", "/v1/events/by-slug/",
	"/v1/events/by-slug/tiers", "/v1/events/by-slug/seating", "/v1/events/by-slug/availability",
	"/v1/events/by-slug/nope-slug/tiers", "/v1/orders/preview", "/v1/orders/preview/", "/v1/orders/check-status",
	"/v1/orders/nope_1/refund/", "/v1/orders/nope_1/nope", "/v1/health/", "/v1/HEALTH", "/v1/docs/",
	"/v1/docs/nope.js", "/v1/docs/a%2Fb", "/v1/openapi.json/", "/v1/seat-holds/", "/v1/webhook-deliveries/nope_1",
	"/v1/payment-notifications/tbank/", "/v1/payment-notifications/nope",
}

var goldenMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "get"}

// TestRoutingGolden_EveryRouteAndTrickyPathAnswersAsRecorded pins the router's
// answers (status, headers incl. Allow and CORS, body) to testdata/routing.golden.
func TestRoutingGolden_EveryRouteAndTrickyPathAnswersAsRecorded(t *testing.T) {
	h := newHarness(t)
	h.organizer("org_golden")
	h.withWebhooks()
	secret, _ := h.key("org_golden", auth.Secret, withScopes(auth.AllScopes...))
	pk, _ := h.key("org_golden", auth.Publishable, withOrigins("https://shop.example"))

	var paths []string
	for _, k := range h.srv.RouteKeys() {
		p := routeSamplePath(strings.SplitN(k, " ", 2)[1])
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	paths = append(paths, trickyPaths...)

	var lines []string
	record := func(handler http.Handler, label, method, target string, opts ...reqOpt) {
		// Built by hand: httptest.NewRequest would resolve the dot segments.
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/", nil)
		u, err := url.ParseRequestURI(target)
		if err != nil {
			t.Fatal(err)
		}
		req.Method, req.URL, req.RequestURI = method, u, target
		req.RemoteAddr = "192.0.2.10:40000"
		for _, o := range opts {
			o(req)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		lines = append(lines, fmt.Sprintf("%s %s %s\n%s", label, method, target, describeResponse(rec.Result())))
	}
	all := h.srv.Handler()
	for _, p := range paths {
		for _, m := range goldenMethods {
			record(all, "anon", m, p)
			record(all, "secret", m, p, bearer(secret))
		}
		// CORS: the preflight for each method, and a browser's GET.
		for _, m := range []string{"GET", "POST", "DELETE", "PUT"} {
			record(all, "preflight", "OPTIONS", p, header("Origin", "https://shop.example"), header("Access-Control-Request-Method", m))
		}
		record(all, "browser", "GET", p, header("Origin", "https://shop.example"), bearer(pk))
	}
	// Each function serves its group only.
	for _, g := range api.AllGroups {
		handler := h.srv.Handler(g)
		for _, k := range h.srv.RouteKeys() {
			method, pattern, _ := strings.Cut(k, " ")
			record(handler, "group:"+string(g), method, routeSamplePath(pattern), bearer(secret))
		}
	}
	checkGolden(t, routingGolden, strings.Join(lines, "\n"))
}

// describeResponse is one response as golden text: status, sorted headers,
// body; request ids, the health probe's timing and the length it changes
// masked.
func describeResponse(res *http.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %d\n", res.StatusCode)
	keys := make([]string, 0, len(res.Header))
	for k := range res.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	body, _ := io.ReadAll(res.Body)
	timed := responseTime.Match(body) // the probe's time has 1 to 4 digits
	for _, k := range keys {
		v := requestIDs.ReplaceAllString(strings.Join(res.Header[k], " | "), "req_*")
		if timed && k == "Content-Length" {
			v = "*"
		}
		fmt.Fprintf(&b, "  %s: %s\n", k, v)
	}
	text := responseTime.ReplaceAllString(requestIDs.ReplaceAllString(string(body), "req_*"), `"response_time_ms":*`)
	text = keyIDs.ReplaceAllString(text, `"key_id":"key_*","last4":"*"`)
	text = ticketKeyIDs.ReplaceAllString(text, `"kid":"tk_*","x":"*"`)
	if len(text) > 600 {
		sum := sha256.Sum256(body)
		text = fmt.Sprintf("(%d bytes, sha256 %s)", len(body), hex.EncodeToString(sum[:8]))
	}
	fmt.Fprintf(&b, "  body %s\n", strings.TrimSuffix(text, "\n"))
	return b.String()
}

// checkGolden compares got with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if updateGolden() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with go test ./internal/api -run Golden -update)", err)
	}
	if got == string(want) {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		gl, wl := "(end)", "(end)"
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			from := max(0, i-8)
			t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\ncontext (golden):\n%s", path, i+1, gl, wl,
				strings.Join(w[from:min(len(w), i+1)], "\n"))
		}
	}
}
