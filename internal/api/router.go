// Package api is tix's HTTP layer: one http.Handler (router, middleware, handlers
// per endpoint group) that every Lambda function and the local runner serve.
package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/emailjobs"
	"tix/internal/logging"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// APIVersion is the revision date of /v1 sent as Tix-Version.
const APIVersion = "2026-06-01"

// Group is an endpoint group: one Lambda function serves one group.
type Group string

// The endpoint groups; each is one Lambda function and its API Gateway routes.
const (
	GroupCatalog  Group = "catalog"
	GroupHolds    Group = "holds"
	GroupOrders   Group = "orders"
	GroupWebhooks Group = "webhooks"
	GroupCheckins Group = "checkins"
)

// AllGroups is every group (the local runner serves them all).
var AllGroups = []Group{GroupCatalog, GroupHolds, GroupOrders, GroupWebhooks, GroupCheckins}

// KeyStore finds a key by the hash of its secret (auth.ErrUnknownKey when none
// has it) and counts an authenticated request on a rate-limit counter item:
// admitted while fewer than limit were counted on it (used: the count after
// this request); the item expires some time after until.
type KeyStore interface {
	LookupKey(ctx context.Context, hash string) (*auth.Key, error)
	CountRequest(ctx context.Context, counter string, limit int, until time.Time) (used int, admitted bool, err error)
}

// HealthChecker reports whether the database answers.
type HealthChecker interface {
	Ping(ctx context.Context) error
}

// Limits are the default budgets, per window (an operator's budgets on a key,
// tixctl keys set-budget, take precedence), and request limits.
type Limits struct {
	ReadsPerWindow  int // a secret key's budget: all requests but order and hold creation
	WritesPerWindow int // a secret key's budget: order and hold creation
	// A publishable key's budgets per client network (IPv4 address, IPv6 /64).
	IPReadsPerWindow, IPWritesPerWindow int
	// A publishable key's ceiling: all of its clients together, charged only
	// by requests that passed validation.
	PKReadsPerWindow, PKWritesPerWindow int
	// PollReadsPerWindow is each client network's budget of requests with a
	// poll token instead of a key.
	PollReadsPerWindow int
	// ShardRate is the most requests a second one counter item of a key's
	// budget takes at full speed; a budget spreads over as many items as
	// that needs (0: DefaultShardRate).
	ShardRate      int
	Window         time.Duration // fixed rate-limit window
	MaxBodyBytes   int64
	KeyCacheTTL    time.Duration // how long a process reuses a key it read (0: never)
	KeyMissTTL     time.Duration // how long a process remembers that no key has a hash (0: never)
	HealthCacheTTL time.Duration // how long GET /health reuses its database probe (0: never)
	// ResponseBytes is the most a seating map response may take as the
	// function's Lambda payload (0: LambdaResponseMax); a larger one is
	// refused with 422 unsupported saying how to read it (seating_write.go).
	ResponseBytes int
}

// DefaultLimits are the contract's figures and our documented cache lifetimes.
var DefaultLimits = Limits{ReadsPerWindow: 600, WritesPerWindow: 60,
	IPReadsPerWindow: 600, IPWritesPerWindow: 60, PKReadsPerWindow: 60000, PKWritesPerWindow: 6000,
	PollReadsPerWindow: 600, Window: time.Minute, MaxBodyBytes: 64 << 10,
	KeyCacheTTL: 10 * time.Second, KeyMissTTL: time.Minute, HealthCacheTTL: 5 * time.Second}

// withPublishableDefaults fills the publishable keys' and poll tokens'
// budgets left unset with DefaultLimits'.
func (l Limits) withPublishableDefaults() Limits {
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&l.IPReadsPerWindow, DefaultLimits.IPReadsPerWindow}, {&l.IPWritesPerWindow, DefaultLimits.IPWritesPerWindow},
		{&l.PKReadsPerWindow, DefaultLimits.PKReadsPerWindow}, {&l.PKWritesPerWindow, DefaultLimits.PKWritesPerWindow},
		{&l.PollReadsPerWindow, DefaultLimits.PollReadsPerWindow},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return l
}

// Server holds the dependencies of the handlers.
type Server struct {
	Keys    KeyStore
	Health  HealthChecker
	Catalog *ticketing.Catalog
	Sales   *ticketing.Sales
	// Webhooks serves the webhook endpoint group.
	Webhooks *webhook.Service
	Clock    clock.Clock
	Limits   Limits
	// PublicURL is the API's public base URL without /v1 (TIX_PUBLIC_URL):
	// servers[0].url of GET /v1/openapi.json ("": the relative /v1).
	PublicURL string
	// Docs renders the API reference at /v1/docs (the catalog group); nil
	// answers 404 there.
	Docs *Docs
	// PaymentNotification verifies and applies one T-Bank notification body
	// (the orders group); nil answers 404 there. An error wrapping
	// ticketing.ErrForgedNotification is a 403.
	PaymentNotification func(ctx context.Context, body []byte) error
	// SecretScanning applies GitHub's secret scanning reports (the webhooks
	// group); nil answers 404 there.
	SecretScanning SecretScanning
	// KeyIPs is told of each secret-key request's client network (nil: not
	// watched); it alerts the owner of a key used from too many in a day.
	KeyIPs interface {
		Seen(ctx context.Context, organizerID, keyID, ip string, now time.Time)
	}
	// CeilingAlerts, when set, is told each time a publishable key's ceiling
	// refuses a request; it alerts the key's owner (once per key and day).
	CeilingAlerts interface {
		CeilingHit(ctx context.Context, organizerID, keyID, bucket string, limit int, now time.Time)
	}
	// Email, when set, adds the buyer's email status to GET /orders/{id} for
	// secret keys with orders:read.
	Email OrderEmails
	// Edge is the CloudFront distribution in front of the API, if any
	// (edge.go): whose client address to believe.
	Edge Edge
	// TicketKeys signs the tickets' codes (nil: tickets carry the unsigned
	// v1 payload) and CheckIns admits them; EnableDoor sets both and serves
	// the door's routes.
	TicketKeys TicketKeys
	CheckIns   CheckIns
	doorRoutes []*route
	// Transfers moves tickets between holders; EnableTransfers sets it and
	// serves its routes (docs/transfers.md).
	Transfers      Transfers
	transferRoutes []*route
	// Waitroom is the waiting room (docs/waiting-room.md); EnableWaitingRoom
	// sets it and serves its routes.
	Waitroom     WaitingRoom
	queueLookups QueueLookups
	queueRoutes  []*route
	// RequestLog, when set, keeps every request authenticated with an
	// organizer's key for GET /request-log/{request_id} (requestlog.go).
	RequestLog RequestLog
	logWrites  sync.WaitGroup // the request log's writes under way

	keys  keyCache
	spent spentCounters
	probe healthCache
}

// OrderEmails reads an order's email jobs (emailjobs.Service).
type OrderEmails interface {
	OrderStatus(ctx context.Context, orderID string) ([]emailjobs.JobView, error)
}

// Rate-limit buckets.
const (
	bucketRead  = "read"
	bucketWrite = "write"
)

// route is one endpoint: who may call it and what it needs. The router
// registers it on a net/http.ServeMux as "METHOD /pattern"; the mux matches
// the path and the method and sets r.PathValue, the route's policy (key,
// scope, query, budget) wraps the handler.
type route struct {
	method  string
	pattern string // path below /v1, with {name} segments
	group   Group
	public  bool   // no key (health, openapi, docs)
	scope   string // required scope ("" = none, e.g. /ping)
	skOnly  bool
	// pollToken routes also accept the order's poll_token instead of a key.
	pollToken bool
	bucket    string
	// validates: the handler validates a body and charges a publishable
	// key's ceiling itself once it is valid (ticketing.Caller.Admit); on
	// other routes the router charges it before the handler.
	validates bool
	// query lists the query parameters the route takes; the router answers
	// any other (or a repeated one) with 400 before the handler runs.
	query []string
	// ownOrigin routes also take a publishable key from the API's own
	// origin: the hosted queue page (waitroom_page.go).
	ownOrigin bool
	handle    func(w http.ResponseWriter, r *http.Request) error
	order     int // place in the table: Allow lists methods in this order
}

func (s *Server) routes() []*route {
	return append([]*route{
		{method: "GET", pattern: "/health", group: GroupCatalog, public: true, handle: s.health},
		{method: "GET", pattern: "/openapi.json", group: GroupCatalog, public: true, handle: s.openAPI},
		{method: "GET", pattern: "/docs", group: GroupCatalog, public: true, handle: s.docs},
		// v: the renderer's version, which the page puts in the script's URL (docsPage).
		{method: "GET", pattern: "/docs/{asset}", group: GroupCatalog, public: true, query: []string{"v"}, handle: s.docsAsset},
		{method: "GET", pattern: "/ping", group: GroupCatalog, handle: s.ping},
		{method: "GET", pattern: "/events", group: GroupCatalog, scope: auth.ScopeEventsRead,
			query: []string{"limit", "cursor", "q", "city", "scene_id", "starts_after", "starts_before", "scope", "sort", "order"}, handle: s.listEvents},
		{method: "GET", pattern: "/events/by-slug/{slug}", group: GroupCatalog, scope: auth.ScopeEventsRead, handle: s.getEventBySlug},
		{method: "GET", pattern: "/events/{id}", group: GroupCatalog, scope: auth.ScopeEventsRead, handle: s.getEvent},
		{method: "GET", pattern: "/events/{id}/tiers", group: GroupCatalog, scope: auth.ScopeEventsRead, handle: s.getTiers},
		{method: "GET", pattern: "/events/{id}/seating", group: GroupCatalog, scope: auth.ScopeSeatingRead, query: []string{"occurrence_id", "zone_id"}, handle: s.getSeating},
		{method: "GET", pattern: "/events/{id}/availability", group: GroupCatalog, scope: auth.ScopeAvailabilityRead, query: []string{"occurrence_id"}, handle: s.getAvailability},

		{method: "POST", pattern: "/seat-holds", group: GroupHolds, scope: auth.ScopeHoldsWrite, bucket: bucketWrite, validates: true, handle: s.createHold},
		{method: "POST", pattern: "/seat-holds/extend", group: GroupHolds, scope: auth.ScopeHoldsWrite, validates: true, handle: s.extendHold},
		{method: "DELETE", pattern: "/seat-holds", group: GroupHolds, scope: auth.ScopeHoldsWrite, validates: true, handle: s.releaseHolds},

		{method: "POST", pattern: "/orders", group: GroupOrders, scope: auth.ScopeOrdersWrite, bucket: bucketWrite, validates: true, handle: s.createOrder},
		{method: "GET", pattern: "/orders", group: GroupOrders, scope: auth.ScopeOrdersList, skOnly: true,
			query: []string{"limit", "cursor", "status", "event_id", "created_after", "created_before"}, handle: s.listOrders},
		{method: "POST", pattern: "/orders/preview", group: GroupOrders, scope: auth.ScopeOrdersWrite, validates: true, handle: s.previewOrder},
		{method: "GET", pattern: "/orders/{id}", group: GroupOrders, scope: auth.ScopeOrdersStatus, pollToken: true, query: []string{"poll_token"}, handle: s.getOrder},
		{method: "POST", pattern: "/orders/{id}/check-status", group: GroupOrders, scope: auth.ScopeOrdersStatus, pollToken: true, query: []string{"poll_token"}, handle: s.getOrder},
		{method: "POST", pattern: "/orders/{id}/cancel", group: GroupOrders, scope: auth.ScopeOrdersWrite, handle: s.cancelOrder},
		{method: "POST", pattern: "/test-helpers/orders/{id}/expire", group: GroupOrders, scope: auth.ScopeOrdersWrite, skOnly: true, handle: s.testExpireOrder},
		{method: "POST", pattern: "/test-helpers/orders/{id}/late-payment", group: GroupOrders, scope: auth.ScopeOrdersWrite, skOnly: true, handle: s.testLatePayment},
		{method: "POST", pattern: "/test-helpers/orders/{id}/refund-outcome", group: GroupOrders, scope: auth.ScopeOrdersRefund, skOnly: true, handle: s.testRefundOutcome},
		{method: "POST", pattern: "/test-helpers/seat-holds/expire", group: GroupOrders, scope: auth.ScopeHoldsWrite, skOnly: true, validates: true, handle: s.testExpireHold},
		{method: "POST", pattern: "/orders/{id}/simulate-payment", group: GroupOrders, scope: auth.ScopeOrdersWrite, skOnly: true, handle: s.simulatePayment},
		{method: "GET", pattern: "/orders/{id}/tickets", group: GroupOrders, scope: auth.ScopeOrdersRead, skOnly: true, handle: s.getTickets},
		{method: "POST", pattern: "/orders/{id}/refund", group: GroupOrders, scope: auth.ScopeOrdersRefund, skOnly: true, handle: s.refundOrder},
		{method: "GET", pattern: "/orders/{id}/refund", group: GroupOrders, scope: auth.ScopeOrdersRefund, skOnly: true, handle: s.getRefund},
		// The bank's notifications: no key, authenticated by the terminal's Token.
		{method: "POST", pattern: "/payment-notifications/tbank", group: GroupOrders, public: true, handle: s.paymentNotification},

		{method: "GET", pattern: "/webhook-endpoints", group: GroupWebhooks, scope: auth.ScopeWebhooksManage, skOnly: true, handle: s.listWebhookEndpoints},
		{method: "GET", pattern: "/webhook-deliveries", group: GroupWebhooks, scope: auth.ScopeWebhooksManage, skOnly: true,
			query: []string{"limit", "cursor", "endpoint_id", "status"}, handle: s.listWebhookDeliveries},
		{method: "GET", pattern: "/order-events", group: GroupWebhooks, scope: auth.ScopeWebhooksManage, skOnly: true,
			query: []string{"limit", "cursor", "type", "order_id", "created_after"}, handle: s.listOrderEvents},
		{method: "POST", pattern: "/webhook-deliveries/{id}/redeliver", group: GroupWebhooks, scope: auth.ScopeWebhooksManage, skOnly: true, handle: s.redeliverWebhook},
		{method: "POST", pattern: "/webhook-endpoints/{id}/replay", group: GroupWebhooks, scope: auth.ScopeWebhooksManage, skOnly: true, handle: s.replayWebhooks},
		{method: "GET", pattern: "/webhook-endpoints/{id}/replays/{replay_id}", group: GroupWebhooks, scope: auth.ScopeWebhooksManage, skOnly: true, handle: s.getWebhookReplay},
		{method: "GET", pattern: "/request-log/{request_id}", group: GroupWebhooks, skOnly: true, handle: s.getRequestLog},
		// GitHub's secret scanning reports: no key, authenticated by GitHub's signature.
		{method: "POST", pattern: "/secret-scanning/github", group: GroupWebhooks, public: true, handle: s.secretScanningReport},
	}, slices.Concat(s.doorRoutes, s.transferRoutes, s.queueRoutes)...)
}

// RouteKeys lists the routes of the given groups (all of them when none is
// named) as "METHOD /pattern", the pattern below /v1 with {name} segments, in
// table order: what the sample events of events/ are checked against.
func (s *Server) RouteKeys(groups ...Group) []string {
	want := map[Group]bool{}
	for _, g := range groups {
		want[g] = true
	}
	var keys []string
	for _, r := range s.routes() {
		if len(groups) == 0 || want[r.group] {
			keys = append(keys, r.method+" "+r.pattern)
		}
	}
	return keys
}

// Handler serves the given groups (all of them when none is named) under /v1.
func (s *Server) Handler(groups ...Group) http.Handler {
	if len(groups) == 0 {
		groups = AllGroups
	}
	if s.Clock == nil {
		s.Clock = clock.System{}
	}
	if s.Limits == (Limits{}) {
		s.Limits = DefaultLimits
	}
	s.Limits = s.Limits.withPublishableDefaults()
	var rs []*route
	for _, r := range s.routes() {
		if slices.Contains(groups, r.group) {
			rs = append(rs, r)
		}
	}
	return newRouter(s, rs)
}

type ctxKey int

const (
	ctxCaller ctxKey = iota
	ctxRouted
)

// requestID is the request's id; the request-id middleware stores it with
// logging.WithRequestID, so every *Context log call of the request carries it.
func requestID(ctx context.Context) string { return logging.RequestID(ctx) }

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "req_" + hex.EncodeToString(b)
}

// stripVersion maps /v1/x to /x. API Gateway passes the stage path (/v1) in the
// raw path; locally the runner serves /v1 too.
func stripVersion(p string) (string, bool) {
	if p == "/v1" {
		return "/", true
	}
	if strings.HasPrefix(p, "/v1/") {
		return strings.TrimSuffix(p[3:], "/"), true
	}
	return p, false
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, _ := stripVersion(r.URL.Path)
	if path == "" {
		path = "/"
	}
	r, viaEdge := rt.s.viaEdge(r)
	isHealth := path == "/health"
	if !isHealth {
		id := newRequestID()
		r = r.WithContext(logging.WithRequestID(r.Context(), id))
		w.Header().Set("Tix-Request-Id", id)
		w.Header().Set("Tix-Version", APIVersion)
	}
	defer func() {
		if v := recover(); v != nil {
			slog.ErrorContext(r.Context(), "panic", "method", r.Method,
				"path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			writeError(w, r, ticketing.Errorf(ticketing.CodeInternal, "panic"))
		}
	}()
	target := routeURL(path, r.URL.RawQuery)
	if !isHealth && rt.cors(w, r, target) {
		return
	}
	_, mux := rt.find(r.Method, target)
	if mux == nil {
		rt.notRouted(w, r, target)
		return
	}
	// The mux sees the path below /v1 and sets the path values; the route's
	// handler restores the request's own URL (routeHandler).
	m := r.WithContext(context.WithValue(r.Context(), ctxRouted, routed{url: r.URL, viaEdge: viaEdge}))
	m.URL = target
	mux.ServeHTTP(w, m)
}

// notRouted answers a request no route takes: 405 with Allow when routes take
// its path with other methods, else 404, both in the error envelope (never
// ServeMux's own plain-text answers).
func (rt *router) notRouted(w http.ResponseWriter, r *http.Request, target *url.URL) {
	if allow := rt.allowed(target); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", ")+", OPTIONS")
		writeError(w, r, ticketing.Errorf(ticketing.CodeMethodNotAllowed, "%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
		return
	}
	writeError(w, r, ticketing.Errorf(ticketing.CodeNotFound, "no endpoint %s %s; see %s for the API reference", r.Method, r.URL.Path, "/v1/openapi.json"))
}

// routed is what the router hands a route's handler beside the mux's request.
type routed struct {
	url     *url.URL // the request's own URL
	viaEdge bool
}

// routeHandler is a route as the mux calls it: admission, the body limit,
// then the handler; an error is answered in the contract's envelope.
type routeHandler struct {
	rt    *router
	route *route
}

func (h routeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	in, _ := r.Context().Value(ctxRouted).(routed)
	r.URL = in.url // r is the router's copy; it keeps the mux's path values
	w, r, logged := h.rt.s.logRequest(w, r, h.route)
	defer logged()
	r, err := h.rt.admit(w, r, h.route, in.viaEdge)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if r.Body != nil && h.rt.s.Limits.MaxBodyBytes > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, h.rt.s.Limits.MaxBodyBytes)
	}
	if err := h.route.handle(w, r); err != nil {
		writeError(w, r, err)
	}
}

// admit decides whether the matched route may serve r: the edge's proof when
// only the edge may call, then the key (or a poll token, which stands in for a
// key on the order status routes, contract section 5 rule 8, on a budget per
// client network; the handler checks it), the declared query parameters and,
// for a route whose body the domain does not validate, the key's ceiling.
func (rt *router) admit(w http.ResponseWriter, r *http.Request, match *route, viaEdge bool) (*http.Request, error) {
	if rt.s.Edge.Only && !viaEdge && !match.public {
		return r, errNotViaEdge
	}
	var err error
	switch {
	case match.pollToken && hasPollToken(r):
		err = rt.s.admitPollToken(w, r)
	case !match.public:
		r, err = rt.s.authenticate(w, r, match)
	}
	if err == nil {
		err = checkQuery(r, match.query)
	}
	if err == nil && !match.validates {
		err = rt.s.chargeCeiling(w, r)
	}
	return r, err
}

// cors answers preflight requests and marks responses readable by the calling
// page, for the routes a browser may call: those that take a publishable key,
// a poll token or no key. Routes only secret keys may call (skOnly) and
// unknown ones get no CORS headers, so no page can read their answers, nor
// send a preflighted request to them. Origin binding is enforced per key on
// the real request (publishable keys only work from their allowed origins), so
// reflecting the origin elsewhere exposes nothing: no cookies are used and no
// credentials mode is allowed.
func (rt *router) cors(w http.ResponseWriter, r *http.Request, target *url.URL) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	method := r.Method
	if preflight {
		method = r.Header.Get("Access-Control-Request-Method")
	}
	if rte, _ := rt.find(method, target); rte == nil || rte.skOnly {
		if preflight {
			w.WriteHeader(http.StatusNoContent)
		}
		return preflight
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Tix-Request-Id, Tix-Version, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After")
	if preflight {
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, Tix-Poll-Token, Tix-Admission")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}
