// Package dashboard is the organizer dashboard: server-rendered pages under
// TIX_DASHBOARD_PATH (/dashboard) where organizers sign up, sign in, manage
// their members, API keys and webhook endpoints (docs/dashboard.md). Every
// change goes through the same services and store methods as the API and
// tixctl (auth.NewKey, the store's key writes, webhook.Service), so the same
// rules, conditional writes and webhooks apply. Accounts, sessions and
// roles are in the account sub-package; this package knows HTTP, not
// DynamoDB: it depends on the narrow interfaces below.
package dashboard

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/dashboard/account"
	"tix/internal/edge"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// Organizers reads and creates organizers (internal/store).
type Organizers interface {
	GetOrganizer(ctx context.Context, id string) (*ticketing.Organizer, error)
}

// Keys is the API keys' storage, as tixctl uses it (internal/store).
type Keys interface {
	CreateKey(ctx context.Context, k auth.Key, hash string) error
	ListKeys(ctx context.Context, organizerID string) ([]auth.Key, error)
	RevokeKey(ctx context.Context, keyID string, at time.Time) (*auth.Key, error)
}

// Webhooks is the webhook endpoints' service (*webhook.Service), as the
// API and tixctl use it.
type Webhooks interface {
	Endpoints(ctx context.Context, org string, env ticketing.Environment) ([]*webhook.Endpoint, error)
	GetEndpoint(ctx context.Context, id string) (*webhook.Endpoint, error)
	CreateEndpoint(ctx context.Context, in webhook.NewEndpoint) (*webhook.Endpoint, string, error)
	VerifyEndpoint(ctx context.Context, id string) (*webhook.Endpoint, webhook.SendResult, error)
	TestEndpoint(ctx context.Context, id string) (webhook.SendResult, error)
	RotateSecret(ctx context.Context, id string) (*webhook.Endpoint, string, error)
	DisableEndpoint(ctx context.Context, id string) (*webhook.Endpoint, error)
	EnableEndpoint(ctx context.Context, id string) (*webhook.Endpoint, error)
	Deliveries(ctx context.Context, q webhook.DeliveryQuery) (*webhook.DeliveryPage, error)
	Redeliver(ctx context.Context, org string, env ticketing.Environment, id string) (*webhook.Delivery, error)
}

// Mailer sends the account emails and the owners' alerts (*email.Service).
type Mailer interface {
	AccountEmail(ctx context.Context, org, to, cause, link string) error
	LiveKeyRevoked(ctx context.Context, org, keyID string, at time.Time) (int, error)
}

// Counter counts attempts on a named budget (the store's rate-limit
// counters: one conditional write each).
type Counter interface {
	CountRequest(ctx context.Context, counter string, limit int, until time.Time) (used int, admitted bool, err error)
}

// Settings are the dashboard's rules; DefaultSettings documents each.
type Settings struct {
	Path       string // URL path prefix, no trailing slash: /dashboard
	PublicURL  string // scheme://host the emailed links start with
	OpenSignup bool
	// SessionTTL is a session's lifetime from sign-in.
	SessionTTL time.Duration
	// Sign-in attempts are counted per account and per client address in
	// fixed windows: after SlowAfter attempts each further one waits
	// SlowDelay times its excess (at most MaxDelay); past AccountLimit or
	// ClientLimit they are refused until the window ends.
	SignInWindow time.Duration
	SlowAfter    int
	SlowDelay    time.Duration
	MaxDelay     time.Duration
	AccountLimit int
	ClientLimit  int
	// SecretOverlap is how long a rotated webhook secret keeps signing
	// (TIX_WEBHOOK_SECRET_OVERLAP), shown after a rotation.
	SecretOverlap time.Duration
	// Link lifetimes.
	VerifyTTL, ResetTTL, InviteTTL time.Duration
	// EdgeSecret is the CloudFront edge's origin secret (TIX_EDGE_SECRET):
	// a request proving it came through the edge is counted, audited and
	// bound by the viewer's address, not the edge's (internal/edge).
	EdgeSecret string
	// Passkeys: the relying party id and origins (empty: from PublicURL,
	// passkey_party.go), and how long a ceremony (adding a passkey,
	// signing in with one) may take from its start.
	PasskeyRPID    string
	PasskeyOrigins []string
	PasskeyTTL     time.Duration
}

// DefaultSettings are the documented figures (docs/dashboard.md).
var DefaultSettings = Settings{
	Path: "/dashboard", SessionTTL: 12 * time.Hour,
	SignInWindow: 15 * time.Minute, SlowAfter: 3, SlowDelay: time.Second, MaxDelay: 5 * time.Second,
	AccountLimit: 10, ClientLimit: 50,
	SecretOverlap: 24 * time.Hour, VerifyTTL: 24 * time.Hour, ResetTTL: time.Hour, InviteTTL: 7 * 24 * time.Hour,
	PasskeyTTL: 5 * time.Minute,
}

// Server is the dashboard.
type Server struct {
	Accounts   account.Store
	Organizers Organizers
	Keys       Keys
	Webhooks   Webhooks
	Replays    WebhookReplays // an endpoint's "Replay events" form (replay.go; nil: none)
	Sales      Sales
	Catalog    Catalog
	Door       DoorCounts // the Events page's door counts (events_door.go; nil: none shown)
	Onsales    Onsales    // the Events page's waiting rooms (onsale.go; nil: none)
	Mail       Mailer     // nil: no email is sent (links are logged at warn level for the operator)
	Counter    Counter
	// The Orders pages (orders.go): the ticketing orders' service, its
	// search, the webhooks and emails of an order (nil: none are shown and
	// resending is refused with a message).
	Orders        Orders
	Search        OrderSearch
	OrderWebhooks OrderWebhooks
	OrderEmails   OrderEmails
	Passkeys      account.Passkeys // nil: no passkeys
	// Payments and Terminals are the Payments page's: the payment
	// accounts (store.Payments) and the connection of a terminal
	// (*payment.Terminals, as tixctl organizers connect-tbank).
	Payments  PaymentAccounts
	Terminals Terminals
	// Identities are the organizers' email identities (store.Emails), as
	// tixctl's set-identity, set-contacts and test-recipients change them.
	Identities Identities
	// Scanner is the door's scanner page (internal/dashboard/scanner), served
	// below Settings.Path/scanner/ behind the same headers; nil: none.
	Scanner  interface{ Routes(mux *http.ServeMux) }
	Clock    clock.Clock
	Settings Settings
	pages    map[string]*template.Template
	rp       *webauthn.WebAuthn // the passkeys' relying party; nil: passkeys are off
}

//go:embed templates/*.html
var templateFS embed.FS

// HTMXVersion is the htmx.org package embedded as static/htmx.min.js,
// pinned in scripts/package.json (a test compares the two byte for byte).
const HTMXVersion = "2.0.11"

//go:embed static
var staticFS embed.FS

// Handler is the dashboard's HTTP handler: every route under Settings.Path,
// behind the security headers and the cross-origin protection.
func (s *Server) Handler() http.Handler {
	if s.Clock == nil {
		s.Clock = clock.System{}
	}
	s.pages = parsePages()
	s.startPasskeys()
	mux := http.NewServeMux()
	p := s.Settings.Path
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET "+p+"/static/", http.StripPrefix(p+"/static/", cacheForever(http.FileServerFS(static))))
	s.accountRoutes(mux, p)
	s.orgRoutes(mux, p)
	s.passkeyRoutes(mux, p)
	if s.Scanner != nil {
		s.Scanner.Routes(mux)
	}
	mux.HandleFunc(p+"/", func(w http.ResponseWriter, r *http.Request) { s.notFound(w, r) })
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusForbidden, "err.crossorigin")
	}))
	return s.viewerAddress(securityHeaders(cop.Handler(mux)))
}

// viewerAddress sets a request's RemoteAddr to the viewer's behind the
// CloudFront edge, so that clientIP (sign-in budgets, the audit log) is the
// person's address, not CloudFront's.
func (s *Server) viewerAddress(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, _ = edge.Resolve(r, s.Settings.EdgeSecret)
		h.ServeHTTP(w, r)
	})
}

// CSP is the pages' Content-Security-Policy: only the dashboard's own
// script and style, no inline code, no framing, forms post only here.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxForm bounds a request's body: the largest form (a key's origins and
// IPs) is a few KB. A multipart body (only the catalog upload reads one)
// may carry a file up to maxCatalogUpload.
const maxForm = 64 << 10

func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cache-Control", "no-store")
		limit := int64(maxForm)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
			limit = maxCatalogUpload + maxForm
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		h.ServeHTTP(w, r)
	})
}

func cacheForever(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		h.ServeHTTP(w, r)
	})
}

// clientIP is the source address (API Gateway's on Lambda, the socket's
// locally); X-Forwarded-For is never trusted.
func clientIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// secure reports whether cookies are marked Secure: always, but for a
// plain-HTTP public URL (the local stack).
func (s *Server) secure() bool { return !strings.HasPrefix(s.Settings.PublicURL, "http://") }

// link is an absolute URL of a dashboard page, for emails: never built from
// the request's Host, which a client chooses.
func (s *Server) link(path string) string { return s.Settings.PublicURL + s.Settings.Path + path }

// redirect sends the browser to a dashboard page (303: a POST's answer is a GET).
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, s.Settings.Path+path, http.StatusSeeOther)
}

// fail shows an error page with a message key.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, key string) {
	v := s.view(r, nil)
	v.Message = key
	s.render(w, r, status, "error", v)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, "err.notfound")
}

// internal logs err and shows a generic error page.
func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	slog.ErrorContext(r.Context(), "dashboard", "path", r.URL.Path, "error", err)
	s.fail(w, r, http.StatusInternalServerError, "err.internal")
}

// serviceError answers an error of a service: bad input and conflicts are
// shown on the page they came from (via show), a missing object is 404.
func (s *Server) serviceError(w http.ResponseWriter, r *http.Request, err error, show func(msg string, status int)) {
	var te *ticketing.Error
	switch {
	case errors.As(err, &te) && te.Code == ticketing.CodeNotFound:
		s.notFound(w, r)
	case errors.As(err, &te) && (te.Code == ticketing.CodeInvalidRequest || te.Code == ticketing.CodeConflict):
		status := http.StatusBadRequest
		if te.Code == ticketing.CodeConflict {
			status = http.StatusConflict
		}
		show(te.Message, status)
	default:
		s.internal(w, r, err)
	}
}
