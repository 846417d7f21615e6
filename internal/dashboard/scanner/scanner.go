// Package scanner is the door's scanner page (docs/door.md, "Scanner
// page"): a phone at a gate signs in with a check-in key, reads tickets'
// QR codes from its camera and shows a big answer; offline it decides from
// the downloaded admission list and syncs its scans later. It is served by
// the dashboard's handler below its path (TIX_DASHBOARD_PATH/scanner/), so
// it shares the dashboard's function, security headers, CSP and
// cross-origin protection, but not its accounts: its session is a check-in
// key's. Every scan goes through ticketing.CheckIns, as POST /v1/check-ins.
package scanner

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/dashboard"
	"tix/internal/ticketcode"
	"tix/internal/ticketing"
)

// KeyLookup reads an API key by its secret's hash (the store's, as the API's
// authentication reads it); auth.ErrUnknownKey when there is none.
type KeyLookup interface {
	LookupKey(ctx context.Context, hash string) (*auth.Key, error)
}

// CheckIns admits tickets (*ticketing.CheckIns, as POST /v1/check-ins and
// POST /v1/check-ins/batch) and lists an event's tickets for an offline door.
type CheckIns interface {
	Scan(ctx context.Context, t ticketing.Tenant, sc ticketing.Scan) (*ticketing.ScanResult, error)
	AdmissionList(ctx context.Context, t ticketing.Tenant, q ticketing.AdmissionQuery) (*ticketcode.AdmissionPage, error)
	Batch(ctx context.Context, t ticketing.Tenant, b ticketing.ScanBatch) ([]ticketing.ScanResult, error)
}

// TicketKeys are the organizer's public ticket keys (*ticketing.TicketKeys).
type TicketKeys interface {
	KeySet(ctx context.Context, t ticketing.Tenant) (*ticketcode.KeySet, error)
}

// Events lists the organizer's events for the door's choice (the store's catalog).
type Events interface {
	ListEvents(ctx context.Context, q ticketing.EventQuery) (*ticketing.EventPage, error)
}

// Sealer seals the session cookie (the webhook secrets' AES-256-GCM keyring).
type Sealer interface {
	Seal(plaintext, aad string) (string, error)
	Open(sealed, aad string) (string, error)
}

// Server is the scanner page and its same-origin JSON endpoints.
type Server struct {
	Keys       KeyLookup
	CheckIns   CheckIns
	TicketKeys TicketKeys
	Events     Events
	Box        Sealer
	Clock      clock.Clock
	// Base is the dashboard's path (/dashboard): the scanner is Base+"/scanner/".
	Base string
	// Secure marks the cookie Secure (every deployment but plain local HTTP).
	Secure bool
	// SessionTTL is how long a signed-in scanner stays signed in (a shift).
	SessionTTL time.Duration

	pages map[string]*template.Template
}

// DefaultSessionTTL is a scanner session's lifetime: a long door shift.
const DefaultSessionTTL = 16 * time.Hour

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// JSQRVersion is the npm package jsqr embedded as static/jsQR.js, pinned in
// scripts/package.json (a test compares the two byte for byte).
const JSQRVersion = "1.4.0"

// Path is the scanner's path prefix.
func (s *Server) Path() string { return s.Base + "/scanner" }

// Routes adds the scanner's routes to mux.
func (s *Server) Routes(mux *http.ServeMux) {
	if s.Clock == nil {
		s.Clock = clock.System{}
	}
	if s.SessionTTL == 0 {
		s.SessionTTL = DefaultSessionTTL
	}
	s.pages = dashboard.ParsePages(templateFS)
	p := s.Path()
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix(p+"/static/", http.FileServerFS(static))
	mux.Handle("GET "+p+"/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache") // the service worker keeps its own copy
		files.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET "+p+"/sw.js", s.serviceWorker)
	mux.HandleFunc("GET "+p+"/{$}", s.page)
	mux.Handle("GET "+p, http.RedirectHandler(p+"/", http.StatusMovedPermanently))
	mux.HandleFunc("POST "+p+"/signin", s.signIn)
	mux.HandleFunc("POST "+p+"/signout", s.signOut)
	mux.HandleFunc("POST "+p+"/api/check-ins", s.api(s.scan))
	mux.HandleFunc("GET "+p+"/api/ticket-keys", s.api(s.ticketKeys))
	mux.HandleFunc("GET "+p+"/api/admission-list", s.api(s.admissionList))
	mux.HandleFunc("POST "+p+"/api/check-ins/batch", s.api(s.batch))
}

// door is a signed-in scanner: its key and the session's CSRF token.
type door struct {
	key  *auth.Key
	csrf string
}

func (d *door) tenant() ticketing.Tenant {
	return ticketing.Tenant{OrganizerID: d.key.OrganizerID, Environment: d.key.Environment}
}

// checkKey tells why key cannot sign a scanner in ("" when it can).
func (s *Server) checkKey(r *http.Request, key *auth.Key) string {
	switch {
	case !key.Usable(s.Clock.Now()):
		return "err.key_revoked"
	case key.Type != auth.Secret || !key.HasScope(auth.ScopeCheckinsWrite):
		return "err.key_scope"
	case !key.IPAllowed(clientIP(r)):
		return "err.key_ip"
	}
	return ""
}

// keyOf authenticates a secret the user typed: it must be a secret key with
// the scope checkins:write, usable from here.
func (s *Server) keyOf(r *http.Request, secret string) (*auth.Key, string, error) {
	t, _, ok := auth.ParseSecret(secret)
	if !ok || t != auth.Secret {
		return nil, "err.key_format", nil
	}
	key, err := s.Keys.LookupKey(r.Context(), auth.Hash(secret))
	if errors.Is(err, auth.ErrUnknownKey) {
		return nil, "err.key_unknown", nil
	}
	if err != nil {
		return nil, "", err
	}
	return key, s.checkKey(r, key), nil
}

// current is the request's signed-in door, nil when it has none or its key
// no longer works (revoked, expired, scope or IP list changed): the key is
// read on every request, so a revocation signs every scanner out at once.
func (s *Server) current(r *http.Request) (*door, error) {
	sess, ok := s.readCookie(r)
	if !ok {
		return nil, nil
	}
	key, err := s.Keys.LookupKey(r.Context(), sess.hash)
	if errors.Is(err, auth.ErrUnknownKey) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s.checkKey(r, key) != "" {
		return nil, nil
	}
	return &door{key: key, csrf: sess.csrf}, nil
}

// doorEvents are the events the key may admit, soonest first: a key bound
// to events, those; else the organizer's upcoming ones.
func (s *Server) doorEvents(ctx context.Context, d *door) ([]*ticketing.Event, error) {
	if s.Events == nil {
		return nil, nil
	}
	page, err := s.Events.ListEvents(ctx, ticketing.EventQuery{OrganizerID: d.key.OrganizerID, Environment: d.key.Environment,
		Limit: 100, Scope: "upcoming", Sort: "start_at", Now: s.Clock.Now()})
	if err != nil {
		return nil, err
	}
	var out []*ticketing.Event
	for _, e := range page.Events {
		if len(d.key.Events) == 0 || slices.Contains(d.key.Events, e.Event.ID) {
			out = append(out, e.Event)
		}
	}
	return out, nil
}

// clientIP is the request's source address (the dashboard's handler has
// set it to the viewer's behind the edge).
func clientIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	slog.ErrorContext(r.Context(), "scanner", "path", r.URL.Path, "error", err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}
